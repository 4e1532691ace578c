// Test program for time travel far from any syscall: compute() runs a loop with no syscall
// for about three seconds (the first argument is its pass count), then main prints the
// result. Halfway through it writes `half` once. A pause must stop the replay inside
// compute(); a reverse step from there, or from that write (a watchpoint's reverse hit), must
// not single-step every instruction since the program's last syscall.
#include <stdio.h>
#include <stdlib.h>

__attribute__((aligned(4096))) unsigned long long state;
// `half` has a page of its own (both start one). Where the CPU's debug registers do not serve
// programs (a PVM guest), a write watchpoint makes the watched page read-only for the run
// (engine/replay/soft_watch_run.h), and `state`'s writes on the same page would each stop the
// loop: on such a machine a watchpoint next to data written in a hot loop is slow (a stop
// per write), which is not what the tests of this program measure.
__attribute__((aligned(4096))) unsigned long long half;

__attribute__((noinline)) unsigned long long compute(unsigned long long n) {
  for (unsigned long long i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + i;
    state ^= state >> 29;
    if (i == n / 2) half = state;
  }
  return state;
}

unsigned long long last_result;

// Called once, right after the loop: its first instruction is the first pass there since
// the last syscall, so a reverse step from it must go back to the call without replaying
// the loop a step at a time.
__attribute__((noinline)) void finished(unsigned long long result) {
  last_result = result;
}

int main(int argc, char** argv) {
  unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000000ull;
  unsigned long long result = compute(n);
  finished(result);
  printf("%llu %llu\n", result, half);
  return 0;
}
