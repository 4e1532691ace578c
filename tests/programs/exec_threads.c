// A multi-threaded process that calls execve (issue 31): the kernel ends every other thread
// and the caller goes on in the new program with the process's pid as its thread id
// (execve(2), "All threads other than the calling thread are destroyed"; ptrace(2),
// "execve(2) under ptrace").
//   exec_threads worker  a second thread execs while main waits in pthread_join and a third
//                        sleeps in read(2) on a pipe
//   exec_threads main    main execs while one thread spins and another sleeps in read(2)
//   exec_threads DIR     as "worker" (random_walk runs its program with a fresh directory)
// Both run this program again as "exec_threads after PID": it checks that it has one
// thread, that its pid and thread id are PID, and prints what it found.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int pipe_fds[2];
static atomic_int spinning;
static char self[4096];

static void* sleeper(void* arg) {
  (void)arg;
  char c;
  ssize_t n = read(pipe_fds[0], &c, 1);  // never written: ends only with the exec
  printf("sleeper woke up (%zd): the exec did not end it\n", n);
  return NULL;
}

static void* spinner(void* arg) {
  (void)arg;
  volatile unsigned long x = 0;
  atomic_store(&spinning, 1);
  for (;;) x = x * 7 + 1;  // runs until the exec ends it
  return NULL;
}

static void run_again(void) {
  char pid[32];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  fflush(stdout);
  char* args[] = {self, "after", pid, NULL};
  execv(self, args);
  perror("execv");
  exit(3);
}

static int threads_now(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  int n = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "Threads:", 8) == 0) n = atoi(line + 8);
  if (f) fclose(f);
  return n;
}

static void* execer(void* arg) {
  (void)arg;
  printf("worker thread execs with %d threads (tid differs from pid: %s)\n", threads_now(),
         syscall(SYS_gettid) != getpid() ? "yes" : "no");
  run_again();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "after") == 0) {
    int before = atoi(argv[2]);
    printf("after exec: threads %d, same pid %s, tid is pid %s\n", threads_now(),
           getpid() == before ? "yes" : "no", syscall(SYS_gettid) == getpid() ? "yes" : "no");
    return 0;
  }
  if (argc != 2 || (strcmp(argv[1], "worker") && strcmp(argv[1], "main") && argv[1][0] != '/')) {
    fprintf(stderr, "usage: exec_threads worker|main|DIR\n");
    return 2;
  }
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0 || pipe(pipe_fds)) return 2;
  pthread_t a, b;
  pthread_create(&a, NULL, sleeper, NULL);
  if (strcmp(argv[1], "main") != 0) {
    pthread_create(&b, NULL, execer, NULL);
    pthread_join(b, NULL);  // never returns: the worker's exec ends main too
    printf("main returned from join: the exec did not end it\n");
    return 1;
  }
  pthread_create(&b, NULL, spinner, NULL);
  while (!atomic_load(&spinning)) usleep(1000);
  printf("main thread execs with %d threads\n", threads_now());
  run_again();
  return 1;
}
