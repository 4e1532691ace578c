// Benchmark workload for the timeline: 120,000 cheap syscalls (getppid) with a little
// computing between them, and marker(i) called every 10,000 iterations, so a breakpoint on it
// is hit once every 10,000 events.
#include <sys/syscall.h>
#include <unistd.h>

volatile long sink;

__attribute__((noinline)) void marker(long i) {
  sink = i;
}

int main(void) {
  unsigned long x = 1;
  for (long i = 0; i < 120000; ++i) {
    for (int k = 0; k < 50; ++k) x = x * 6364136223846793005ul + 1442695040888963407ul;
    if (i % 10000 == 5000) marker(i);
    syscall(SYS_getppid);
  }
  sink = (long)x;
  return 0;
}
