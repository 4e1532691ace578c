// Sample: a child process sleeps a random time, then sends SIGUSR1 to its parent, which is
// busy computing. The handler notes the iteration it interrupted: different on every run,
// reproduced exactly by replay.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "busy_work.h"

static volatile sig_atomic_t got;
static volatile long iterations;
static long seen = -1;

static void on_usr1(int sig) {
  (void)sig;
  seen = iterations;
  got = 1;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  pid_t parent = getpid();
  pid_t child = fork();
  if (child == 0) {
    unsigned char r = 0;
    getrandom(&r, 1, 0);
    struct timespec ts = {0, (2 + r % 6) * 1000000L};  // 2 to 7 ms
    nanosleep(&ts, NULL);
    kill(parent, SIGUSR1);
    _exit(0);
  }
  unsigned long long x = 1;
  while (!got) {
    STEP64(x) STEP64(x) iterations = iterations + 1;
  }
  waitpid(child, NULL, 0);
  printf("SIGUSR1 arrived at iteration %ld (%llu)\n", seen, x & 1);
  return 0;
}
