// A thread blocked in read(2) on a pipe while its process is stopped (SIGSTOP) and continued
// (SIGCONT, from a child): the read returns ERESTARTSYS to the tracer, with no handler to
// run, and restarts when the thread runs again; it then gets the byte the main thread
// writes. For replay/thread_checkpoint_test: a checkpoint taken between the interrupted read
// and its restart must restart it too.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int fds[2];

static void* reader(void* arg) {
  char c = 0;
  ssize_t n = read(fds[0], &c, 1);
  printf("reader: read %zd byte '%c'\n", n, c);
  return arg;
}

int main(void) {
  if (pipe(fds) != 0) return 1;
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  usleep(50000);  // the reader blocks in its read
  pid_t parent = getpid(), child = fork();
  if (child == 0) {
    usleep(50000);
    kill(parent, SIGCONT);
    _exit(0);
  }
  kill(parent, SIGSTOP);  // every thread stops; the reader's read is interrupted
  waitpid(child, NULL, 0);
  if (write(fds[1], "x", 1) != 1) return 1;
  pthread_join(t, NULL);
  printf("thread_restart done\n");
  return 0;
}
