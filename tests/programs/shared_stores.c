// Test program for a write watch on memory shared between processes: a MAP_SHARED |
// MAP_ANONYMOUS page at the fixed address 0x200000000 (tests/timeline/soft_watch_test.cpp
// watches it there) holds `watched` and a neighbour; a loop of argv[1] passes (1000 by
// default, no syscall) stores the pass into the neighbour and, every 100 passes, into
// `watched`, each with a plain `mov`. Kept in software, the watch makes the page read-only;
// a tracer's write through /proc/PID/mem to a shared page that is not writable is refused
// (the kernel's FOLL_FORCE makes copy-on-write copies of private pages only), so those stores
// must be let through another way. Prints the two values at the end.
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

struct shared {
  volatile long watched;
  volatile long neighbour;
};

int main(int argc, char** argv) {
  long passes = argc > 1 ? atol(argv[1]) : 1000;
  struct shared* s = mmap((void*)0x200000000ul, 4096, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (s == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  for (long i = 1; i <= passes; ++i) {
    s->neighbour = i;
    if (i % 100 == 0) s->watched = i;
  }
  printf("%ld %ld\n", s->watched, s->neighbour);
  return 0;
}
