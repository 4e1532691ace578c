/* For the syscall buffering test: calls that wait for another thread of the same process,
 * which librewind_preload.so buffers with its desched counter enabled, so that the recorder
 * notices when they wait and runs the other thread:
 * - a reader thread's read() on an empty pipe until a writer thread writes (and poll() and
 *   ppoll() on it);
 * - a condition variable (futex wait and wake);
 * - open() of a FIFO for reading, which waits until another thread opens it for writing;
 * - a read() on a pipe nobody writes, interrupted by SIGALRM (a handler without SA_RESTART):
 *   it must fail with EINTR as it does without rewind.
 * Prints what each part saw; the same lines in every run and every replay.
 * Usage: blocking_calls DIR (where it may make a FIFO). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

enum { kMessages = 200 };

static int pipe_fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int turn, rounds_done;
static char fifo_path[512];

/* Keeps the writer busy between writes, so that the reader finds the pipe empty. */
static long spin(long n) {
  volatile long x = 0;
  for (long i = 0; i < n; ++i) x += i;
  return x;
}

static void* writer(void* arg) {
  (void)arg;
  for (int i = 1; i <= kMessages; ++i) {
    spin(20000);
    if (write(pipe_fds[1], &i, sizeof i) != sizeof i) return (void*)1;
  }
  close(pipe_fds[1]);
  return 0;
}

static void* ping(void* arg) {
  (void)arg;
  for (int r = 0; r < 50; ++r) {
    pthread_mutex_lock(&lock);
    while (turn != 1) pthread_cond_wait(&cond, &lock);
    turn = 0;
    ++rounds_done;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
  }
  return 0;
}

static void* fifo_writer(void* arg) {
  (void)arg;
  spin(200000);
  int fd = open(fifo_path, O_WRONLY);
  if (fd < 0) return (void*)1;
  const char msg[] = "through the fifo";
  long ok = write(fd, msg, sizeof msg) == sizeof msg;
  close(fd);
  return ok ? (void*)0 : (void*)1;
}

static void on_alarm(int sig) {
  (void)sig;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  setvbuf(stdout, 0, _IOLBF, 0);

  /* 1. A reader waiting for a writer thread. */
  if (pipe(pipe_fds) != 0) return 1;
  pthread_t w;
  pthread_create(&w, 0, writer, 0);
  long sum = 0, reads = 0, polls = 0;
  for (;;) {
    struct pollfd p = {pipe_fds[0], POLLIN, 0};
    /* poll, and every other time ppoll without a timeout or a mask (both buffered). */
    if (reads % 4 == 0) polls += poll(&p, 1, -1) == 1 && (p.revents & (POLLIN | POLLHUP));
    if (reads % 4 == 2) polls += ppoll(&p, 1, NULL, NULL) == 1 && (p.revents & (POLLIN | POLLHUP));
    int v;
    ssize_t n = read(pipe_fds[0], &v, sizeof v);
    if (n <= 0) break;
    sum += v;
    ++reads;
  }
  void* wr;
  pthread_join(w, &wr);
  close(pipe_fds[0]);
  printf("pipe: %ld messages, sum %ld, %ld polls ready, writer %s\n", reads, sum, polls,
         wr ? "failed" : "ok");

  /* 2. A condition variable, both ways. */
  pthread_t p;
  pthread_create(&p, 0, ping, 0);
  for (int r = 0; r < 50; ++r) {
    pthread_mutex_lock(&lock);
    turn = 1;
    pthread_cond_signal(&cond);
    while (turn != 0) pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
  }
  pthread_join(p, 0);
  printf("condvar: %d rounds\n", rounds_done);

  /* 3. A FIFO: this open waits for the other thread's. */
  snprintf(fifo_path, sizeof fifo_path, "%s/fifo", argv[1]);
  unlink(fifo_path);
  if (mkfifo(fifo_path, 0600) != 0) return 1;
  pthread_t f;
  pthread_create(&f, 0, fifo_writer, 0);
  int fd = open(fifo_path, O_RDONLY);
  char buf[64] = {0};
  ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  void* fr;
  pthread_join(f, &fr);
  printf("fifo: %zd bytes '%s', writer %s\n", got, buf, fr ? "failed" : "ok");
  if (fd >= 0) close(fd);
  unlink(fifo_path);

  /* 4. A read nobody answers, interrupted by a timer's signal. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: the read fails with EINTR */
  sigaction(SIGALRM, &sa, 0);
  int quiet[2];
  if (pipe(quiet) != 0) return 1;
  struct itimerval it = {{0, 0}, {0, 50000}};
  setitimer(ITIMER_REAL, &it, 0);
  char c;
  ssize_t n = read(quiet[0], &c, 1);
  printf("interrupted read: %zd %s\n", n, n < 0 ? strerror(errno) : "");
  return 0;
}
