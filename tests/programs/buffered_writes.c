// Test program for reverse continues through many writes in one event interval that began
// with buffered syscalls: main opens its own executable, reads it in buffered `read` calls
// (librewind_preload.so records them without a ptrace stop, so they belong to the interval
// of the next traced syscall), then write_counter() writes `counter` once per pass (the
// first argument is the pass count) with a little computing between the writes, and
// finished() is called right after the loop, before the next syscall. A reverse continue
// with a watchpoint on `counter` from finished() lands after the last write; each one after
// it must land after the write before, starting from checkpoints taken inside the interval
// (the task had used buffered records there) rather than replaying from the interval's
// start (tests/timeline/interval_checkpoints_test.cpp).
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

// On a page of its own: where writes are watched in software, other data written next to it
// would stop the loop too.
__attribute__((aligned(4096))) volatile unsigned long long counter;
__attribute__((aligned(4096))) unsigned long long mix;

__attribute__((noinline)) void write_counter(unsigned long long n) {
  for (unsigned long long i = 1; i <= n; ++i) {
    for (int k = 0; k < 200; ++k) mix = mix * 6364136223846793005ull + i;
    counter = i;
  }
}

// Called once, right after the loop (no syscall since the reads).
__attribute__((noinline)) void finished(unsigned long long last) {
  mix ^= last;
}

int main(int argc, char** argv) {
  unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000ull;
  int fd = open("/proc/self/exe", O_RDONLY);
  if (fd < 0) return 2;
  char buf[512];
  long total = 0;
  for (int i = 0; i < 8; ++i) total += read(fd, buf, sizeof buf);
  write_counter(n);
  finished(counter);
  close(fd);
  printf("read %ld bytes, counter %llu\n", total, counter);
  return 0;
}
