// Test program for reverse continues that pass many hits between two events: a loop with no
// syscall (the first argument is its pass count; about 0.4 s by default) that calls mark(k)
// every 2^18 passes, k counting from 1. mark() writes last_mark, a watchpoint target. A
// reverse continue to mark() from the end must land on its last call, and each further one on
// the call before, however many hits its scan counted before the checkpoints it passed.
#include <stdio.h>
#include <stdlib.h>

volatile unsigned long long state;
volatile long last_mark;

__attribute__((noinline)) void mark(long k) {
  last_mark = k;
}

int main(int argc, char** argv) {
  long passes = argc > 1 ? atol(argv[1]) : 100000000L;
  for (long i = 1; i <= passes; ++i) {
    state = state * 6364136223846793005ull + (unsigned long long)i;
    if ((i & 0x3ffff) == 0) mark(i >> 18);
  }
  printf("%ld\n", last_mark);
  return 0;
}
