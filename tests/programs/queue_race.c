// Test program: the race rewind exists for. Two producers and two consumers share a ring
// buffer of items that carry a checksum of their value. A producer writes its item into the
// slot at the tail *before* it claims the slot (the bug); when two producers pick the same
// slot at once, the slot can end up with one producer's value and the other's checksum, and
// the consumer that takes it aborts in check_item(). Recorded with --chaos --until-failure.
// check_item() gets the slot the item came from, so a debugger can watch that slot.
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define SLOTS 16
#define ITEMS 300
#define PRODUCERS 2
#define CONSUMERS 2

struct item {
  long value;
  long checksum;
};

struct queue {
  struct item slots[SLOTS];
  atomic_long head, tail;
  pthread_mutex_t lock;
} q = {.lock = PTHREAD_MUTEX_INITIALIZER};

static atomic_long consumed;

__attribute__((noinline)) void check_item(const struct item* it, long slot) {
  if (it->checksum != it->value * 31 + 7) {
    fprintf(stderr, "corrupt item in slot %ld: value %ld checksum %ld\n", slot, it->value,
            it->checksum);
    abort();
  }
}

__attribute__((noinline)) void put(long v) {
  for (;;) {
    long t = atomic_load(&q.tail);
    if (t - atomic_load(&q.head) < SLOTS) {
      struct item* s = &q.slots[t % SLOTS];
      s->value = v;  // the bug: written before the slot is claimed below
      for (volatile int k = 0; k < 3000; ++k) {
      }
      s->checksum = v * 31 + 7;
      if (atomic_compare_exchange_strong(&q.tail, &t, t + 1)) return;
    }
  }
}

static int take(struct item* out, long* slot) {
  pthread_mutex_lock(&q.lock);
  long h = atomic_load(&q.head);
  if (h == atomic_load(&q.tail)) {
    pthread_mutex_unlock(&q.lock);
    return 0;
  }
  *slot = h % SLOTS;
  *out = q.slots[h % SLOTS];
  atomic_store(&q.head, h + 1);
  pthread_mutex_unlock(&q.lock);
  return 1;
}

static void* producer(void* arg) {
  long base = (long)arg * 1000000;
  for (long i = 0; i < ITEMS; ++i) put(base + i);
  return NULL;
}

static void* consumer(void* arg) {
  struct item it;
  long slot;
  while (atomic_load(&consumed) < PRODUCERS * ITEMS) {
    if (!take(&it, &slot)) continue;
    check_item(&it, slot);
    atomic_fetch_add(&consumed, 1);
  }
  return arg;
}

int main(void) {
  pthread_t p[PRODUCERS], c[CONSUMERS];
  for (long i = 0; i < CONSUMERS; ++i) pthread_create(&c[i], NULL, consumer, NULL);
  for (long i = 0; i < PRODUCERS; ++i) pthread_create(&p[i], NULL, producer, (void*)(i + 1));
  for (int i = 0; i < PRODUCERS; ++i) pthread_join(p[i], NULL);
  for (int i = 0; i < CONSUMERS; ++i) pthread_join(c[i], NULL);
  printf("consumed %ld items\n", (long)consumed);
  return 0;
}
