// Test program for reverse steps whose replay runs through the heap's first growth: main
// calls tick(i) 100 times, mallocing 64 KiB before tick(50) (glibc's first malloc moves the
// program break with brk(2): buffered calls that replay makes for real), then calls done().
// No traced syscall comes between the loop's start and done(), so a reverse step in a later
// tick() or from done() replays the malloc (tests/timeline/heap_growth_test.cpp).
#include <stdlib.h>

volatile int sink;

__attribute__((noinline)) void tick(int i) {
  sink = i;
}

__attribute__((noinline)) void done(const char* p) {
  sink = p[0];
}

int main(void) {
  char* p = NULL;
  for (int i = 0; i < 100; ++i) {
    if (i == 50) p = malloc(64 * 1024);  // below the mmap threshold: from the heap
    tick(i);
  }
  if (!p) return 1;
  p[0] = 7;
  done(p);
  return 0;
}
