// Sample: a long computation that prints its progress and stops cleanly on Ctrl-C (SIGINT).
// Where it was interrupted depends on when the user pressed the keys.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "busy_work.h"

static volatile sig_atomic_t interrupted;
static volatile long rounds;

static void on_int(int sig) {
  (void)sig;
  interrupted = 1;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_int;
  sigaction(SIGINT, &sa, NULL);
  printf("computing; press Ctrl-C to stop\n");
  fflush(stdout);
  unsigned long long x = 1;
  while (!interrupted) {
    STEP64(x) STEP64(x) rounds = rounds + 1;
    if (rounds % 20000 == 0) usleep(1000);  // now and then, a syscall
  }
  printf("interrupted after %ld rounds (%llu)\n", rounds, x & 1);
  return 130;
}
