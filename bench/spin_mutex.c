// Benchmark workload for issue 25's long traces (bench/long_traces): THREADS threads (first
// argument, default 4) share ROUNDS of work (second argument, default 64,000,000 in all, about
// 10 s of recorded run time on the 2-core development VM). Each round is a little computing;
// every 64 rounds a thread adds to a total under a mutex, every 1,024 it takes a spin lock
// (a test-and-set loop: the spin-wait), and every 8,192 it makes a syscall that is not
// buffered (sched_yield), so the trace has events throughout. Thread 1 calls marker() at
// eight evenly spaced rounds; marker() writes last_mark, the benchmark's watchpoint target.
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "busy_work.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_flag spin = ATOMIC_FLAG_INIT;
static unsigned long long total, spun;
static long rounds_each;
volatile long last_mark;

__attribute__((noinline)) void marker(long round) {
  last_mark = round;
}

static void* work(void* arg) {
  long id = (long)arg;
  unsigned long long x = (unsigned long long)id, local = 0;
  for (long i = 0; i < rounds_each; ++i) {
    STEP64(x) local += x >> 60;
    if ((i & 63) == 63) {
      pthread_mutex_lock(&lock);
      total += local;
      pthread_mutex_unlock(&lock);
      local = 0;
    }
    if ((i & 1023) == 1023) {
      while (atomic_flag_test_and_set_explicit(&spin, memory_order_acquire)) {
      }
      spun += x & 1;
      atomic_flag_clear_explicit(&spin, memory_order_release);
    }
    if ((i & 8191) == 8191) sched_yield();
    if (id == 1 && i % (rounds_each / 8) == rounds_each / 16) marker(i);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 4;
  long rounds = argc > 2 ? atol(argv[2]) : 64000000L;
  if (threads < 1 || threads > 64 || rounds < 16 * threads) return 2;
  rounds_each = rounds / threads;
  pthread_t t[64];
  for (long i = 0; i < threads; ++i) pthread_create(&t[i], NULL, work, (void*)(i + 1));
  for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
  printf("total %llu spun %llu last mark %ld\n", total, spun, last_mark);
  return 0;
}
