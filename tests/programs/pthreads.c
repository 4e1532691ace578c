// Test program: a mutex-protected counter, a producer/consumer queue on a condition variable,
// and a spin-wait on an atomic flag set by another thread. Prints the results, which are the
// same on every run; recording and replay must agree on them and on every interleaving.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define WORKERS 3
#define ITEMS 200

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static int queue[ITEMS], head, tail;
static long sum, counted;
static atomic_int go;

static void* consumer(void* arg) {
  long mine = 0;
  for (;;) {
    pthread_mutex_lock(&lock);
    while (head == tail && tail < ITEMS) pthread_cond_wait(&nonempty, &lock);
    if (head == tail) {
      pthread_mutex_unlock(&lock);
      break;
    }
    int v = queue[head++];
    sum += v;
    counted++;
    pthread_mutex_unlock(&lock);
    mine++;
  }
  return (void*)mine + 0 * (long)arg;
}

static void* spinner(void* arg) {
  while (!atomic_load(&go)) {
  }  // spin-wait on an atomic flag
  return arg;
}

int main(void) {
  pthread_t spin;
  pthread_create(&spin, NULL, spinner, (void*)42L);
  pthread_t c[WORKERS];
  for (long i = 0; i < WORKERS; ++i) pthread_create(&c[i], NULL, consumer, (void*)i);
  for (int i = 0; i < ITEMS; ++i) {
    pthread_mutex_lock(&lock);
    queue[tail++] = i;
    pthread_cond_signal(&nonempty);
    pthread_mutex_unlock(&lock);
  }
  pthread_mutex_lock(&lock);
  pthread_cond_broadcast(&nonempty);
  pthread_mutex_unlock(&lock);
  atomic_store(&go, 1);
  void* r;
  pthread_join(spin, &r);
  long total = 0;
  for (int i = 0; i < WORKERS; ++i) {
    void* n;
    pthread_join(c[i], &n);
    total += (long)n;
  }
  printf("spinner returned %ld; consumed %ld items (%ld by workers), sum %ld\n", (long)r, counted,
         total, sum);
  return 0;
}
