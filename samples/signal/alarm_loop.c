// Sample: a compute loop stopped by SIGALRM through a volatile flag (setitimer). The handler
// notes how many iterations it saw; that number depends on where the signal landed, so it
// differs from run to run — and replay must reproduce it exactly.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "busy_work.h"

static volatile sig_atomic_t stop;
static volatile long iterations;
static long seen_by_handler = -1;

static void on_alarm(int sig) {
  (void)sig;
  seen_by_handler = iterations;
  stop = 1;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval t = {{0, 0}, {0, 5000}};  // 5 ms
  setitimer(ITIMER_REAL, &t, NULL);
  unsigned long long x = 1;
  while (!stop) {
    STEP64(x) STEP64(x) iterations = iterations + 1;
  }
  printf("handler saw %ld iterations; loop ran %ld (%llu)\n", seen_by_handler, iterations, x & 1);
  return 0;
}
