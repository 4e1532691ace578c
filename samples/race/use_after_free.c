// Sample: a worker thread checks that a shared job still exists, does some work, then uses
// it; meanwhile the main thread retires the job (frees it and clears the pointer). When the
// retirement lands between the check and the use, the worker dereferences NULL: SIGSEGV,
// only sometimes.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "busy_work.h"

struct job {
  const char* name;
  long done;
};

static struct job* volatile current;  // the bug: checked and used without a lock

static void* worker(void* arg) {
  (void)arg;
  unsigned long long noise = 7;
  long handled = 0;
  for (int i = 0; i < 60000; ++i) {
    if (current) {  // check...
      STEP8(noise)
      STEP8(noise)
      STEP8(noise)
      current->done += 1 + (long)(noise & 0);  // ...then use: crashes if retired meanwhile
      ++handled;
    }
  }
  printf("worker handled %ld\n", handled);
  return NULL;
}

int main(void) {
  struct job* j = malloc(sizeof *j);
  j->name = "job";
  j->done = 0;
  current = j;
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  unsigned long long noise = 3;
  for (int i = 0; i < 30000; ++i) {
    STEP8(noise) STEP8(noise) STEP8(noise) STEP8(noise)
  }
  long done = j->done;
  current = NULL;  // retire the job while the worker may be using it
  free(j);
  pthread_join(t, NULL);
  printf("retired after %ld (%llu)\n", done, noise & 1);
  return 0;
}
