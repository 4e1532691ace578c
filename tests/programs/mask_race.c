/* A fast interval timer's SIGALRM while a loop blocks and unblocks it with nothing between
 * the two sigprocmask calls (both buffered by the preload library): a signal often comes
 * while the task is in the library's code right before the call that blocks it. Prints
 * whether the handler ran TICKS times (argv[1], default 60) and never inside the blocked
 * section. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks, in_blocked, violations;

static void on_alarm(int sig) {
  (void)sig;
  ticks++;
  if (in_blocked) violations++;
}

int main(int argc, char** argv) {
  const int want = argc > 1 ? atoi(argv[1]) : 60;
  struct sigaction a = {0};
  a.sa_handler = on_alarm;
  sigaction(SIGALRM, &a, NULL);
  sigset_t alrm;
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  struct itimerval it = {{0, 200}, {0, 200}};
  setitimer(ITIMER_REAL, &it, NULL);
  long rounds = 0;
  while (ticks < want && rounds < 5000000) {
    sigprocmask(SIG_BLOCK, &alrm, NULL);
    in_blocked = 1;
    in_blocked = 0;
    sigprocmask(SIG_UNBLOCK, &alrm, NULL);
    rounds++;
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("mask_race: %d ticks %d, inside the blocked section %d\n", want, ticks >= want,
         violations);
  return 0;
}
