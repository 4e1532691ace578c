// Test program: three threads compute and meet at a mutex forever, so recording preempts them
// over and over; the test kills the program from outside (SIGKILL) at a random moment. A
// cheap syscall every 5000 rounds bounds how far replay searches for each preemption point
// (counter-less replay stops at every pass of the point's instruction since the last event).
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long total;

static void* work(void* arg) {
  unsigned long x = (unsigned long)arg;
  for (unsigned long i = 0;; ++i) {
    x = x * 6364136223846793005ul + 1442695040888963407ul;
    if (i % 5000 == 0) syscall(SYS_getppid);
    if ((i & 0xffff) == 0) {
      pthread_mutex_lock(&lock);
      total += x >> 60;
      pthread_mutex_unlock(&lock);
    }
  }
  return NULL;
}

int main(void) {
  pthread_t t[3];
  for (long i = 0; i < 3; ++i) pthread_create(&t[i], NULL, work, (void*)(i + 1));
  printf("running %d\n", (int)getpid());  // the test kills this pid
  fflush(stdout);
  pthread_join(t[0], NULL);
  return 0;
}
