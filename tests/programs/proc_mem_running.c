// Writes into the memory of a child process while the child's threads run, through
// /proc/PID/mem (proc(5)), as gdb's displaced stepping does while the inferior's other
// threads go on: the child's main thread spins in user code until it sees the first write;
// its second thread waits in a read on a pipe meanwhile, and checks the second write once the
// main thread wakes it. The parent prints what the child reported.
// Built -O2: the spinning loop keeps its counter in a register, so that the point where the
// recorder stops it (a Sched event) tells its passes apart.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile int flag;          // written by the parent while the main thread spins
static volatile char message[16];  // written by the parent while the reader waits in read
static int wake[2];

static void* reader(void* arg) {
  (void)arg;
  char c;
  if (read(wake[0], &c, 1) != 1) return (void*)1;
  printf("reader: woken, message \"%s\"\n", (const char*)message);
  return NULL;
}

static int child(int ready_fd) {
  pthread_t t;
  if (pipe(wake) != 0 || pthread_create(&t, NULL, reader, NULL) != 0) return 2;
  if (write(ready_fd, "r", 1) != 1) return 3;
  uint64_t passes = 0;
  while (!flag) ++passes;  // the parent's write ends it
  printf("child: saw flag %d after spinning\n", flag);
  fflush(stdout);
  if (write(wake[1], "w", 1) != 1) return 4;
  void* result;
  pthread_join(t, &result);
  fflush(stdout);  // the child ends with _exit
  return result == NULL && passes > 0 ? 0 : 5;
}

int main(void) {
  int ready[2];
  if (pipe(ready) != 0) return 1;
  pid_t pid = fork();
  if (pid == 0) _exit(child(ready[1]));
  char c;
  if (read(ready[0], &c, 1) != 1) return 1;
  // Let the child spin a while and its reader reach its read.
  struct timespec pause = {0, 50 * 1000 * 1000};
  nanosleep(&pause, NULL);
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
  int fd = open(path, O_RDWR);
  if (fd < 0) {
    perror("open");
    return 1;
  }
  // The message first (the reader waits in its read), then the flag (the main thread spins).
  const char text[] = "from the parent";
  ssize_t n1 = pwrite(fd, text, sizeof text, (off_t)(uintptr_t)message);
  int one = 1;
  ssize_t n2 = pwrite(fd, &one, sizeof one, (off_t)(uintptr_t)&flag);
  close(fd);
  int status = 0;
  waitpid(pid, &status, 0);
  printf("parent: wrote %zd and %zd bytes\n", n1, n2);
  printf("parent: child exited %d with %d\n", WIFEXITED(status), WEXITSTATUS(status));
  return 0;
}
