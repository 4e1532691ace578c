/* Processes that write memory they share (MAP_SHARED | MAP_ANONYMOUS, inherited by fork):
 * what each one reads depends on when the others wrote, so a replay shows the same only if
 * the recording ran them in an order it could keep (record_task.h, Turns). Three cases:
 * - handoff: the child yields until the parent, after an mprotect to read-only and back,
 *   sets a flag (rr's mmap_shared_prot test); it prints how many yields that took;
 * - counters: two children each add 1 to a shared counter 300,000 times without a lock or
 *   a syscall, and print the sum of the values they read; the parent prints the final count
 *   (natively lower than 600,000 where their increments overlap);
 * - spin: the child spins, without syscalls, until the parent sets a flag after a 2 ms
 *   sleep; it prints how many passes that took.
 * The numbers differ from run to run; each replay must print the recording's (programs.sh
 * shared_turns). */
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
  volatile int flag;
  volatile long counter;
};

static struct shared* sh;

static void wait_child(pid_t child) {
  int status;
  waitpid(child, &status, 0);
}

static void handoff(void) {
  sh->flag = 0;
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    long yields = 0;
    while (!sh->flag) {
      sched_yield();
      ++yields;
    }
    printf("handoff: the child saw the flag after %ld yields\n", yields);
    fflush(stdout);
    _exit(0);
  }
  mprotect(sh, 4096, PROT_READ);
  mprotect(sh, 4096, PROT_READ | PROT_WRITE);
  sh->flag = 1;
  wait_child(child);
}

static void counters(void) {
  sh->counter = 0;
  pid_t children[2];
  fflush(stdout);
  for (int c = 0; c < 2; ++c) {
    children[c] = fork();
    if (children[c] == 0) {
      unsigned long sum = 0;
      for (int i = 0; i < 300000; ++i) {
        long v = sh->counter;
        sum += (unsigned long)v;
        sh->counter = v + 1;
      }
      printf("counters: child %d read values summing to %lu\n", c, sum);
      fflush(stdout);
      _exit(0);
    }
  }
  for (int c = 0; c < 2; ++c) wait_child(children[c]);
  printf("counters: final count %ld\n", sh->counter);
}

static void spin(void) {
  sh->flag = 0;
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    unsigned long passes = 0;
    while (!sh->flag) ++passes;
    printf("spin: the child passed %lu times\n", passes);
    fflush(stdout);
    _exit(0);
  }
  struct timespec ts = {0, 2000000};
  nanosleep(&ts, NULL);
  sh->flag = 1;
  wait_child(child);
}

int main(void) {
  sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) return 1;
  handoff();
  counters();
  spin();
  return 0;
}
