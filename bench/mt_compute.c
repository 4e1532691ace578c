// Benchmark workload: four threads compute and merge their results into a shared total under
// a mutex every 256 rounds. CPU-bound with occasional lock traffic, so recording preempts
// threads in the middle of their work (the counter-less cost that bench/record_overhead reports).
#include <pthread.h>
#include <stdio.h>

#include "busy_work.h"

#define THREADS 4
#define ROUNDS 100000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long total;

static void* work(void* arg) {
  unsigned long long x = (unsigned long long)(long)arg, local = 0;
  for (int i = 0; i < ROUNDS; ++i) {
    STEP64(x) STEP64(x) local += x >> 60;
    if ((i & 255) == 255) {
      pthread_mutex_lock(&lock);
      total += local;
      pthread_mutex_unlock(&lock);
      local = 0;
    }
  }
  return NULL;
}

int main(void) {
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; ++i) pthread_create(&t[i], NULL, work, (void*)(i + 1));
  for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  printf("total %llu\n", total);
  return 0;
}
