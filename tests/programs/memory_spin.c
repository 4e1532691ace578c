// Test program for points between events in a loop whose state lives in memory only: built
// without optimisation, a thread counts in a global until the main thread, after a few short
// sleeps, sets a flag. At most of the loop's instructions the registers are the same at every
// pass (the counter is in memory), where a preemption's point would make replay stop at
// every pass (RecordSession::step_to_distinct_point moves it). Prints "counted" and whether
// the counter moved, which does not depend on the schedule.
// Usage: memory_spin [SLEEPS]
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile unsigned long spin_count;
volatile int spin_done;

static void* spinner(void* arg) {
  (void)arg;
  while (!spin_done) ++spin_count;
  return 0;
}

int main(int argc, char** argv) {
  int sleeps = argc > 1 ? atoi(argv[1]) : 10;
  pthread_t t;
  if (pthread_create(&t, 0, spinner, 0) != 0) return 1;
  for (int i = 0; i < sleeps; ++i) usleep(2000);
  spin_done = 1;
  pthread_join(t, 0);
  printf("counted: %s\n", spin_count > 0 ? "yes" : "no");
  return 0;
}
