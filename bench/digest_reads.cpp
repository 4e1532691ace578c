// Benchmark: what a whole-memory digest (engine/ticks/memory_digest.h, digest_memory) costs
// a process that shares its memory copy-on-write with a fork, as a replayed process does with
// its checkpoints. A child writes --mib MiB of heap and forks (the "checkpoint"); then, N
// times: the child forks again (a new checkpoint: its pages are shared anew), and the
// digest of the child's memory is timed twice, first right after that fork, then once more.
// Prints the median of each and how much the child's proportional set size (Pss,
// /proc/PID/smaps_rollup) grew over each digest: memory the digest made the child copy.
// Usage: digest_reads [--runs N] [--mib M]. Prints medians in milliseconds.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_stats.h"
#include "engine/ticks/memory_digest.h"

using namespace rwd;
using bench::Clock;
using bench::median;
using bench::ms_since;

namespace {

/// Pss of process `pid` in KiB (proc(5), smaps_rollup).
long pss_kib(pid_t pid) {
  FILE* f = fopen(("/proc/" + std::to_string(pid) + "/smaps_rollup").c_str(), "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "Pss: %ld kB", &kib) == 1) break;
  fclose(f);
  return kib;
}

/// Writes one byte to the child's pipe; the child forks a new "checkpoint" per byte and
/// answers once it has.
struct Child {
  pid_t pid = 0;
  int ask = -1, done = -1;
};

Child start(size_t mib) {
  int a[2], d[2];
  if (pipe(a) != 0 || pipe(d) != 0) exit(1);
  pid_t p = fork();
  if (p == 0) {
    setpgid(0, 0);
    size_t n = mib << 20;
    char* heap = static_cast<char*>(malloc(n));
    for (size_t i = 0; i < n; i += 4096) heap[i] = char(i >> 12);
    pid_t checkpoint = 0;
    char c;
    while (read(a[0], &c, 1) == 1) {
      if (checkpoint > 0) kill(checkpoint, SIGKILL), waitpid(checkpoint, nullptr, 0);
      checkpoint = fork();
      if (checkpoint == 0)
        for (;;) pause();
      (void)!write(d[1], "k", 1);
    }
    _exit(0);
  }
  return {p, a[1], d[0]};
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  size_t mib = 256;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
    if (!strcmp(argv[i], "--mib")) mib = size_t(atol(argv[i + 1]));
  }
  Child c = start(mib);
  std::vector<double> fresh, again, grew_fresh, grew_again;
  for (int r = 0; r < runs; ++r) {
    char k;
    if (write(c.ask, "c", 1) != 1 || read(c.done, &k, 1) != 1) return 1;
    long p0 = pss_kib(c.pid);
    auto t0 = Clock::now();
    MemoryDigest d1 = digest_memory(c.pid, {});
    fresh.push_back(ms_since(t0));
    long p1 = pss_kib(c.pid);
    t0 = Clock::now();
    MemoryDigest d2 = digest_memory(c.pid, {});
    again.push_back(ms_since(t0));
    long p2 = pss_kib(c.pid);
    if (!(d1 == d2)) {
      fprintf(stderr, "digest_reads: two digests of the same memory differ\n");
      return 1;
    }
    grew_fresh.push_back(double(p1 - p0) / 1024);
    grew_again.push_back(double(p2 - p1) / 1024);
  }
  kill(-c.pid, SIGKILL);
  waitpid(c.pid, nullptr, 0);
  printf("whole-memory digest of a process with %zu MiB of heap shared with a fork\n", mib);
  printf("| digest | median ms | Pss growth MiB (median) | runs |\n| --- | ---: | ---: | ---: |\n");
  printf("| first after a new fork | %.1f | %.1f | %d |\n", median(fresh), median(grew_fresh),
         runs);
  printf("| again | %.1f | %.1f | %d |\n", median(again), median(grew_again), runs);
  return 0;
}
