// Test program for timer signals faster than the recorder can deliver them
// (RecordSession::hold_timer_expiry): an interval timer (ITIMER_REAL, SIGALRM) every
// INTERVAL_US microseconds while THREADS threads (1: the main thread alone) compute over a
// buffer of MB mebibytes. Natively the handler runs a few hundred times; recorded, each
// delivery takes a digest of all that memory (milliseconds), longer than the interval, and
// a thread got no time to run between two handlers: the recording never ended.
// Usage: timer_flood THREADS MB INTERVAL_US PASSES. Prints each thread's result (which
// depends only on the arguments) and whether any alarm came.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile sig_atomic_t alarms;
static unsigned char* buffer;
static size_t buffer_len;
static unsigned long passes;

static void on_alarm(int sig) {
  (void)sig;
  ++alarms;
}

static void* compute(void* seed) {
  unsigned long x = (unsigned long)seed;
  for (unsigned long i = 0; i < passes; ++i) x = x * 31 + buffer[(i * 4099) % buffer_len];
  return (void*)x;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: timer_flood THREADS MB INTERVAL_US PASSES\n");
    return 2;
  }
  int threads = atoi(argv[1]);
  buffer_len = strtoul(argv[2], NULL, 0) << 20;
  long interval = strtol(argv[3], NULL, 0);
  passes = strtoul(argv[4], NULL, 0);
  if (threads < 1 || threads > 8 || buffer_len == 0) return 2;
  buffer = malloc(buffer_len);
  for (size_t i = 0; i < buffer_len; ++i) buffer[i] = (unsigned char)(i * 7);
  signal(SIGALRM, on_alarm);
  struct itimerval every = {{0, interval}, {0, interval}};
  setitimer(ITIMER_REAL, &every, NULL);
  unsigned long results[8];
  if (threads == 1) {
    results[0] = (unsigned long)compute((void*)1);
  } else {
    pthread_t t[8];
    for (long k = 0; k < threads; ++k) pthread_create(&t[k], NULL, compute, (void*)(k + 1));
    sigset_t alrm;  // the alarms go to the computing threads
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL);
    for (int k = 0; k < threads; ++k) {
      void* r;
      pthread_join(t[k], &r);
      results[k] = (unsigned long)r;
    }
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  for (int k = 0; k < threads; ++k) printf("thread %d: %lx\n", k, results[k]);
  printf("alarms came: %s\n", alarms > 0 ? "yes" : "no");
  return 0;
}
