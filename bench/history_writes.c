// Benchmark workload for history queries (bench/omniscient_queries): THREADS threads (argv[3],
// default 1) each make EVENTS/THREADS cheap syscalls (getppid; argv[1], default 1,000,000 in
// all) with a little computing between them, and write the global `watched` WRITES/THREADS
// times (argv[2], default 10,000 in all), each time a new value, evenly spread, through
// note(), so that it is also called that many times (the calls query); note() writes the
// same value into one element of the 4 KiB array `ring` (the history of a wide watch).
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

volatile long watched;
volatile long sink;
volatile long ring[512];
static long events = 1000000, writes = 10000, threads = 1;

/// Stores `v` in `watched` and in ring[v % 512]; returns twice `v`.
__attribute__((noinline)) long note(long v) {
  watched = v;
  ring[v % 512] = v;
  return 2 * v;
}

static void* work(void* arg) {
  long t = (long)arg;
  long n = events / threads, every = n / (writes / threads);
  unsigned long x = (unsigned long)t + 1;
  for (long i = 0; i < n; ++i) {
    for (int k = 0; k < 20; ++k) x = x * 6364136223846793005ul + 1442695040888963407ul;
    if (i % every == every / 2) sink = note(i * threads + t + 1);
    syscall(SYS_getppid);
  }
  sink = (long)x;
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) events = atol(argv[1]);
  if (argc > 2) writes = atol(argv[2]);
  if (argc > 3) threads = atol(argv[3]);
  if (events < 1 || writes < 1 || threads < 1 || threads > 64 || writes > events) return 2;
  pthread_t tids[64];
  if (threads == 1) {
    work((void*)0);
    return 0;
  }
  for (long t = 0; t < threads; ++t) pthread_create(&tids[t], NULL, work, (void*)t);
  for (long t = 0; t < threads; ++t) pthread_join(tids[t], NULL);
  return 0;
}
