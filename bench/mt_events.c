// Benchmark workload for the timeline on threads: bench/many_events.c split over four threads
// that run at once: each makes 30,000 cheap syscalls (getppid) with a little computing between
// them and calls marker(i) every 2,500 of its iterations, so a breakpoint on it is hit about
// once every 10,000 events of the trace. The main thread waits in pthread_join meanwhile.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THREADS 4
#define ITERATIONS 30000

volatile long sink;

__attribute__((noinline)) void marker(long i) {
  sink = i;
}

static void* work(void* arg) {
  unsigned long x = (unsigned long)(long)arg;
  for (long i = 0; i < ITERATIONS; ++i) {
    for (int k = 0; k < 50; ++k) x = x * 6364136223846793005ul + 1442695040888963407ul;
    if (i % 2500 == 1250) marker(i);
    syscall(SYS_getppid);
  }
  sink = (long)x;
  return NULL;
}

int main(void) {
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; ++i) pthread_create(&t[i], NULL, work, (void*)(i + 1));
  for (int i = 0; i < THREADS; ++i) pthread_join(t[i], NULL);
  return 0;
}
