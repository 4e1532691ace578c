// Test program for reverse watchpoints between events: one global written 2,000 times in a
// loop that makes no syscall, with a few thousand instructions of other work between two
// writes. Going back to a write must not single-step from the last event (millions of
// instructions): the timeline counts its steps from the write before.
#include <stdio.h>

unsigned long mix;

int main(void) {
  printf("start\n");
  fflush(stdout);
  for (long i = 1; i <= 2000; ++i) {
    volatile long work = 0;
    for (int j = 0; j < 500; ++j) work += j;
    mix = mix * 3 + i;  // the watched write
  }
  printf("mix=%ld\n", mix);
  return 0;
}
