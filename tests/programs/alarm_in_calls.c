// Test program: a SIGALRM ends a loop that spends its time in malloc and free, as a
// benchmark's timed loop does (openssl speed). The loop's registers are the same at every pass
// of those functions: `memory` counts the passes in a global (every pass loads and stores
// it), `frame` in a register of main that the function it calls saves on the stack and
// reuses (in malloc and free the count is in memory only). The signal nearly always lands
// in malloc or free; the recorder must deliver it where replay tells that pass from the
// others. Prints the passes the handler saw; replay must print the same.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t run = 1;
static volatile long in_memory;  // `memory`: the count
static long seen;                // `memory`: the count when the handler ran

static void on_alarm(int sig) {
  (void)sig;
  seen = in_memory;
  run = 0;
}

static char* volatile sink;  // keeps the blocks from being optimised away

/// Two blocks allocated and freed: free(3) runs twice a pass, with other registers each time.
/// `a` lives across the calls in a callee-saved register, which this function saves first.
/// noipa: main knows nothing of which registers it uses.
__attribute__((noipa)) static void churn(size_t n) {
  char* a = malloc(n);
  char* b = malloc(2 * n);
  sink = a;
  sink = b;
  free(b);
  free(a);
}

int main(int argc, char** argv) {
  const int frame = argc > 1 && strcmp(argv[1], "frame") == 0;
  signal(SIGALRM, on_alarm);
  struct itimerval t = {{0, 0}, {0, 200000}};  // one SIGALRM, after 200 ms
  setitimer(ITIMER_REAL, &t, NULL);
  long passes = 0;  // `frame`: the count, in a register of main
  if (frame) {
    for (passes = 0; run; ++passes) churn(64);
  } else {
    while (run) {
      churn(64);
      in_memory = in_memory + 1;
    }
    passes = in_memory;
  }
  if (frame)
    printf("frame: %ld passes\n", passes);
  else
    printf("memory: handler saw %ld passes; %ld passes\n", seen, passes);
  return 0;
}
