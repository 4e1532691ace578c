// Test program for reverse continues to the last of many stores that come close together:
// main stores 1..20,000 into `counter`, one store every fraction of a microsecond (a count
// of 500 between two), in a loop with no syscall (a few milliseconds), then runs argv[1]
// more turns of a loop that stores into `other` only (0 when not given), then prints both
// (tests/timeline/late_watch_test.cpp). A watchpoint on `counter` is hit at every turn of
// the first loop.
#include <stdio.h>
#include <stdlib.h>

volatile long counter;
volatile long other;

int main(int argc, char** argv) {
  const long n = 20000;
  const long tail = argc > 1 ? atol(argv[1]) : 0;
  for (long i = 1; i <= n; ++i) {
    for (volatile int k = 0; k < 500; ++k) {
    }
    counter = i;
  }
  for (long i = 0; i < tail; ++i) other = i;
  printf("%ld %ld\n", counter, other);
  return 0;
}
