// Test program for the timeline: a loop that calls tick(i) (a breakpoint target), adds i to a
// global counter (a watchpoint target) and writes a line with one write() syscall.
#include <stdio.h>
#include <unistd.h>

long counter;

__attribute__((noinline)) void tick(long i) {
  counter += i;
}

int main(void) {
  for (long i = 1; i <= 5; ++i) {
    tick(i);
    char line[64];
    int n = snprintf(line, sizeof line, "i=%ld counter=%ld\n", i, counter);
    write(1, line, (size_t)n);
  }
  return 0;
}
