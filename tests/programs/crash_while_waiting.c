// Test program: the main thread waits in read() on an empty pipe; a worker interrupts that
// read with an ignored signal (a traced task still wakes: the read returns ERESTARTSYS to the
// tracer and would restart), then crashes before the main thread runs again. The whole
// process dies of SIGSEGV while the main thread sits at its interrupted read: replay must
// end it there, as the recording did.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static pid_t main_tid;

static void* worker(void* arg) {
  (void)arg;
  struct timespec wait = {0, 20 * 1000 * 1000};  // main is in its read by then
  nanosleep(&wait, NULL);
  syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
  volatile unsigned long spin = 0;  // give the recorder time to see the read return
  for (unsigned long i = 0; i < 50000; ++i) spin += i;
  *(volatile int*)0 = 1;
  return NULL;
}

int main(void) {
  signal(SIGUSR1, SIG_IGN);
  if (pipe(fds) != 0) return 1;
  main_tid = (pid_t)syscall(SYS_gettid);
  printf("waiting\n");
  fflush(stdout);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  char c;
  ssize_t n = read(fds[0], &c, 1);  // never returns: nothing writes the pipe
  printf("read returned %zd\n", n);
  return 0;
}
