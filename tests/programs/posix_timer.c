// Test program: a POSIX timer (timer_create/timer_settime) delivers SIGRTMIN with a value to a
// handler installed with SA_SIGINFO, interrupting a compute loop; a second, nested signal
// (SIGUSR1 raised inside the handler) runs its own handler first. Prints what each saw.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "busy_work.h"

static volatile sig_atomic_t stop;
static volatile long iterations;
static long seen, nested_at = -1;
static int value;

static void on_usr1(int sig) {
  (void)sig;
  nested_at = iterations;
}

static void on_timer(int sig, siginfo_t* si, void* uc) {
  (void)sig;
  (void)uc;
  value = si->si_value.sival_int;
  seen = iterations;
  raise(SIGUSR1);  // nested: delivered inside this handler
  stop = 1;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_timer;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGRTMIN, &sa, NULL);
  signal(SIGUSR1, on_usr1);
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_SIGNAL;
  sev.sigev_signo = SIGRTMIN;
  sev.sigev_value.sival_int = 4711;
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) return 2;
  struct itimerspec its = {{0, 0}, {0, 3000000}};  // 3 ms
  timer_settime(timer, 0, &its, NULL);
  unsigned long long x = 1;
  while (!stop) {
    STEP64(x) STEP64(x) iterations = iterations + 1;
  }
  timer_delete(timer);
  printf("timer value %d at iteration %ld; nested SIGUSR1 at %ld (%llu)\n", value, seen, nested_at,
         x & 1);
  return 0;
}
