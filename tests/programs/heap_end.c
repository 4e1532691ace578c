/* Moving the program break (brk(2), sbrk(3)), which librewind_preload.so buffers and replay
 * makes again for real: the heap grows and shrinks, new pages are written and read back, a
 * brk the kernel refuses returns the old break, a second thread moves the break too, and a
 * timer's signals land between the calls (their points digest the heap), then SIGTRAP is
 * ignored while it moves the break (replay must not reset the action). Prints what the
 * program saw, the same natively, recorded and replayed. Usage: heap_end */
#define _GNU_SOURCE
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t ticks;
/* The break is one per process: the two threads take turns (sbrk(3) is not thread-safe). */
static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_alarm(int sig) {
  (void)sig;
  ticks++;
}

/* Grows the heap by `pages` pages, fills them, reads them back, gives half of them back.
 * Returns the sum read. */
static uint64_t grow_once(int round, int pages) {
  pthread_mutex_lock(&heap_lock);
  char* start = sbrk((intptr_t)pages * 4096);
  if (start == (void*)-1) {
    pthread_mutex_unlock(&heap_lock);
    return 0;
  }
  for (int i = 0; i < pages; ++i) memset(start + (size_t)i * 4096, (round + i) & 0xff, 4096);
  uint64_t sum = 0;
  for (int i = 0; i < pages; ++i) sum += (unsigned char)start[(size_t)i * 4096 + 100];
  sbrk(-(intptr_t)(pages / 2) * 4096);
  pthread_mutex_unlock(&heap_lock);
  return sum;
}

static void* thread_main(void* arg) {
  uint64_t* sum = arg;
  for (int round = 0; round < 200; ++round) *sum += grow_once(round, 2);
  return NULL;
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);   /* no stdio buffer from malloc between the moves */
  mallopt(M_TRIM_THRESHOLD, INT_MAX); /* and malloc never moves the break down itself */
  char* first = sbrk(0);
  uint64_t sum = 0;
  for (int round = 0; round < 100; ++round) sum += grow_once(round, 1 + round % 7);
  printf("grown and shrunk 100 times: sum %llu, break moved %ld pages\n", (unsigned long long)sum,
         (long)(((char*)sbrk(0) - first) / 4096));

  /* The kernel refuses a break inside the program's own code: brk returns the old break. */
  long now = syscall(SYS_brk, 0);
  long refused = syscall(SYS_brk, 4096);
  printf("refused brk: %s\n", refused == now ? "returned the old break" : "moved it");

  pthread_t t;
  uint64_t thread_sum = 0;
  pthread_create(&t, NULL, thread_main, &thread_sum);
  uint64_t main_sum = 0;
  for (int round = 0; round < 200; ++round) main_sum += grow_once(round, 3);
  pthread_join(t, NULL);
  printf("two threads: sums %llu and %llu\n", (unsigned long long)main_sum,
         (unsigned long long)thread_sum);

  /* Signals between brk calls: each lands at a point whose memory digest covers the heap. */
  signal(SIGALRM, on_alarm);
  struct itimerval it = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_REAL, &it, NULL);
  uint64_t timed_sum = 0;
  long rounds = 0;
  char* base = sbrk(0);
  while (ticks < 20 && rounds < 2000000) {
    timed_sum += grow_once((int)rounds++, 2);
    brk(base); /* back where the loop started: the heap stays small however long it runs */
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("with a timer: %s\n",
         ticks >= 20 && sbrk(0) == base ? "20 signals between the calls" : "too few signals");
  /* With SIGTRAP ignored: the replayer makes brk without its int3 stub then, whose forced
   * SIGTRAP would reset the action to SIG_DFL (remote_syscall.cpp); the program reads it. */
  signal(SIGTRAP, SIG_IGN);
  uint64_t ignored_sum = 0;
  for (int round = 0; round < 20; ++round) ignored_sum += grow_once(round, 2);
  struct sigaction trap;
  sigaction(SIGTRAP, NULL, &trap);
  printf("SIGTRAP ignored: sum %llu, action %s\n", (unsigned long long)ignored_sum,
         trap.sa_handler == SIG_IGN ? "still ignored" : "reset");
  printf("heap_end done, break %s where it started\n", sbrk(0) > (void*)first ? "above" : "at");
  return 0;
}
