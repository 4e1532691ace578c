// Test program: a SIGALRM ends a loop that spends its time in malloc and free, as a
// benchmark's timed loop does (openssl speed). The loop's registers are the same at every pass
// of those functions: `memory` counts the passes in a global (every pass loads and stores
// it), `frame` in a register of main that the function it calls saves on the stack and
// reuses (in malloc and free the count is in memory only). The signal nearly always lands
// in malloc or free; the recorder must deliver it where replay tells that pass from the
// others. `inner` counts in the global too, but spends its time in a short inner loop whose
// registers differ from pass to pass and come back at every call (openssl speed's SIGALRM
// lands in OPENSSL_cleanse's). `deep` counts in a register of main, and spends its time in a
// hash whose call is longer than the recorder's search steps (openssl speed's SHA-256 of 256
// bytes and more): the count is told apart only on the stack, where the hash saved it.
// Prints the passes the handler saw; replay must print the same.
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

/// Fills `n` words, one division a pass: the pass's index is in a register, and every call
/// with the same arguments passes through the same registers again. At most 8 passes: the
/// recorder steps through 64 instructions of a loop whose registers differ before it takes
/// them to change (signal_point.cpp, kChangingSteps).
__attribute__((noipa)) static void fill(volatile long* p, size_t n, long d) {
  for (size_t i = 0; i < n; ++i) p[i] = d / (long)(i + 1);
}

static long words[8];

/// Straight-line work between two calls of fill, cheap but many instructions: the task
/// leaves fill's loop for more steps than a pass takes, as a benchmark's digest does between
/// two OPENSSL_cleanse, and the signal still lands in fill nearly always.
__attribute__((noipa)) static void pad(void) {
  __asm__ volatile(".rept 48\n\tnop\n\t.endr");
}

/// One step of a hash (FNV-1a's): a call a pass of digest's loop.
__attribute__((noipa)) static unsigned long mix(unsigned long h, unsigned char c) {
  return (h ^ c) * 0x100000001b3ul;
}

static unsigned char block[512];
static volatile unsigned long digest_sink;

/// Hashes `n` bytes with a call a byte: about 6,000 instructions a call, more than the
/// recorder's signal point search steps, with registers that differ from byte to byte and
/// come back at every call. The loop keeps its state in callee-saved registers across the
/// calls, so it saves main's (the count, in `deep`) on the stack first.
__attribute__((noipa)) static void digest(const unsigned char* p, size_t n) {
  unsigned long h = 0xcbf29ce484222325ul;
  for (size_t i = 0; i < n; ++i) h = mix(h, p[i]);
  digest_sink = h;
}

int main(int argc, char** argv) {
  const int frame = argc > 1 && strcmp(argv[1], "frame") == 0;
  const int inner = argc > 1 && strcmp(argv[1], "inner") == 0;
  const int deep = argc > 1 && strcmp(argv[1], "deep") == 0;
  signal(SIGALRM, on_alarm);
  struct itimerval t = {{0, 0}, {0, 200000}};  // one SIGALRM, after 200 ms
  setitimer(ITIMER_REAL, &t, NULL);
  long passes = 0;  // `frame`: the count, in a register of main
  if (frame) {
    for (passes = 0; run; ++passes) churn(64);
  } else if (deep) {
    for (passes = 0; run; ++passes) digest(block, sizeof block);
  } else if (inner) {
    while (run) {
      fill(words, 8, 1000003);
      pad();
      in_memory = in_memory + 1;
    }
    passes = in_memory;
  } else {
    while (run) {
      churn(64);
      in_memory = in_memory + 1;
    }
    passes = in_memory;
  }
  if (frame || deep)
    printf("%s: %ld passes\n", frame ? "frame" : "deep", passes);
  else
    printf("%s: handler saw %ld passes; %ld passes\n", inner ? "inner" : "memory", seen, passes);
  return 0;
}
