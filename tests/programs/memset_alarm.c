// Test program: SIGALRM arrives while the program spends its time in a large memset, which
// glibc implements with `rep stosb`: the signal usually lands inside that instruction, where
// no breakpoint could find the point again. The recorder delivers it right after the
// instruction instead; replay must reproduce the handler's count.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t stop;
static volatile long calls;
static long seen;

static void on_alarm(int sig) {
  (void)sig;
  seen = calls;
  stop = 1;
}

int main(void) {
  char* buf = malloc(1 << 20);
  signal(SIGALRM, on_alarm);
  struct itimerval t = {{0, 0}, {0, 20000}};
  setitimer(ITIMER_REAL, &t, NULL);
  while (!stop) {
    memset(buf, (int)calls, 1 << 20);
    calls = calls + 1;
  }
  printf("handler saw %ld memsets; %ld done; byte %d\n", seen, calls, buf[12345]);
  return 0;
}
