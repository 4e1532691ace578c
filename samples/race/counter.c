// Sample: two threads add to a shared counter without a lock. Each increment reads the
// counter, does some work, and writes it back; when the scheduler switches threads between
// the read and the write, increments are lost and the total comes out short — sometimes.
#include <pthread.h>
#include <stdio.h>

#include "busy_work.h"

#define ITERATIONS 20000

static long counter;  // the bug: no lock, not atomic

static void* worker(void* arg) {
  unsigned long long noise = (unsigned long long)(long)arg;
  for (int i = 0; i < ITERATIONS; ++i) {
    long seen = counter;
    STEP8(noise) STEP8(noise) STEP8(noise) STEP8(noise) counter = seen + 1 + (long)(noise & 0);
  }
  return (void*)(long)(noise & 1);
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, NULL, worker, (void*)1L);
  pthread_create(&b, NULL, worker, (void*)2L);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("total %ld (expected %d)\n", counter, 2 * ITERATIONS);
  if (counter != 2 * ITERATIONS) {
    printf("FAIL: lost %ld increments\n", 2 * ITERATIONS - counter);
    return 1;
  }
  printf("ok\n");
  return 0;
}
