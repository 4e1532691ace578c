// Benchmark workload for the timeline on a file mapped shared (timeline_latency --shared-file):
// bench/many_events.c's work, with a pwrite into a 256 KiB file mapped MAP_SHARED instead of
// each getppid, read back through the mapping (LMDB's pattern). Replay's mappings show its
// copy of the file, which each checkpoint keeps a snapshot of (engine/replay/shared_files.h).
// marker(i) is called every 10,000 iterations.
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

enum { kPage = 4096, kPages = 64 };

volatile long sink;

__attribute__((noinline)) void marker(long i) {
  sink = i;
}

int main(void) {
  char path[] = "/tmp/rewind-shared-file-events.XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || ftruncate(fd, kPage * kPages) != 0) return 1;
  const volatile unsigned long* map = mmap(NULL, kPage * kPages, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return 1;
  unsigned long x = 1;
  for (long i = 0; i < 120000; ++i) {
    for (int k = 0; k < 50; ++k) x = x * 6364136223846793005ul + 1442695040888963407ul;
    if (i % 10000 == 5000) marker(i);
    const long page = i % kPages;
    if (pwrite(fd, &x, sizeof x, page * kPage) != sizeof x) return 1;
    x ^= map[page * kPage / sizeof x];  // what it just wrote: 0 unless the mapping missed it
    x += (unsigned long)i;
  }
  sink = (long)x;
  unlink(path);
  return 0;
}
