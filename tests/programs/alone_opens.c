/* For the syscall buffering test: opens that wait while no other task takes the process's
 * turns (rewind_preload_abi.h, RWD_FEATURE_TURNS), which librewind_preload.so buffers without
 * its desched counter, and the waits it still arms:
 * 1. open() of a FIFO for reading, which waits until a child process opens it for writing;
 * 2. in a forked child (alone in its own memory), the same, its parent the writer;
 * 3. a read() on a pipe a child writes into later: armed, made traced when it waits (its
 *    traced call is where a replay lets the writer run before the reader goes on);
 * 4. while another thread waits, a FIFO's open: armed again, made traced when it waits.
 * Each peer acts only once the waiting task sleeps (state S in /proc/PID/stat), so that every
 * one of these calls waits, in any run. Prints what each part saw; the same lines in every
 * run and every replay.
 * Usage: alone_opens DIR (where it may make FIFOs) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char fifo_path[512];

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Waits until task `tid` sleeps in the kernel (state S, proc(5)), for up to 10 s. */
static void wait_until_sleeping(pid_t tid) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)tid);
  for (int i = 0; i < 10000; ++i) {
    FILE* f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    const char* paren = strrchr(buf, ')');
    if (paren && paren[1] == ' ' && paren[2] == 'S') return;
    sleep_ms(1);
  }
}

static int reaped(pid_t pid) {
  int st = 0;
  return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* A child that opens the FIFO for writing once task `waiter` sleeps, writes `text`, ends. */
static pid_t fifo_writer(pid_t waiter, const char* text) {
  pid_t pid = fork();
  if (pid == 0) {
    wait_until_sleeping(waiter);
    int fd = open(fifo_path, O_WRONLY);
    ssize_t n = fd >= 0 ? write(fd, text, strlen(text)) : -1;
    _exit(n == (ssize_t)strlen(text) ? 0 : 1);
  }
  return pid;
}

/* Parts 1 and 4: this task's open of the FIFO waits for a child's. */
static void fifo_open(const char* part) {
  pid_t w = fifo_writer((pid_t)gettid(), "fifo");
  int fd = open(fifo_path, O_RDONLY);
  char buf[16] = {0};
  ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  printf("%s: read %zd bytes '%s' from the FIFO, writer %s\n", part, n, buf,
         reaped(w) ? "ok" : "failed");
  if (fd >= 0) close(fd);
}

static int hold[2];

/* Part 4's thread: waits until main writes into `hold`. */
static void* held(void* arg) {
  char c;
  return read(hold[0], &c, 1) == 1 ? arg : (void*)1;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  setvbuf(stdout, 0, _IONBF, 0);
  snprintf(fifo_path, sizeof fifo_path, "%s/alone_fifo", argv[1]);
  unlink(fifo_path);
  if (mkfifo(fifo_path, 0600) != 0) return 1;
  fifo_open("alone");

  /* 2. A forked child's open waits for its parent's. */
  pid_t child = fork();
  if (child == 0) {
    int fd = open(fifo_path, O_RDONLY);
    char buf[16] = {0};
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    printf("forked child: read %zd bytes '%s' from the FIFO\n", n, buf);
    _exit(n == 4 ? 0 : 1);
  }
  wait_until_sleeping(child);
  int fd = open(fifo_path, O_WRONLY);
  if (fd < 0 || write(fd, "down", 4) != 4) return 1;
  close(fd);
  printf("forked child %s\n", reaped(child) ? "ok" : "failed");

  /* 3. A pipe's read stays armed. */
  int p[2];
  if (pipe(p) != 0) return 1;
  pid_t w = fork();
  if (w == 0) {
    wait_until_sleeping(getppid());
    _exit(write(p[1], "pipe", 4) == 4 ? 0 : 1);
  }
  char buf[16] = {0};
  ssize_t n = read(p[0], buf, sizeof buf - 1);
  printf("pipe: read %zd bytes '%s', writer %s\n", n, buf, reaped(w) ? "ok" : "failed");

  /* 4. Beside a thread. */
  if (pipe(hold) != 0) return 1;
  pthread_t t;
  void* ret = (void*)1;
  pthread_create(&t, 0, held, 0);
  fifo_open("beside a thread");
  if (write(hold[1], "x", 1) != 1) return 1;
  pthread_join(t, &ret);
  printf("thread %s\n", ret ? "failed" : "ok");
  unlink(fifo_path);
  return 0;
}
