/* Signal masks set by buffered sigprocmask calls, as the signals that come between them see
 * them. A fast interval timer's SIGALRM handler reads the mask its frame saved (uc_sigmask)
 * and checks SIGUSR2 in it against the loop's phase, while the loop blocks and unblocks
 * SIGUSR2 with SIG_BLOCK and SIG_UNBLOCK, then with SIG_SETMASK (the old mask it gets back is
 * checked too). Every 64 rounds it blocks SIGSEGV, a signal the kernel forces, makes a traced
 * syscall (a ptrace stop in replay too), restores the mask with SIG_SETMASK and faults: the
 * SIGSEGV handler jumps back out (siglongjmp), so a SIGSEGV still blocked in the kernel would
 * end the process instead. Prints whether the handler ran TICKS times (argv[1], default 40),
 * the masks that were not the loop's, and the faults handled. It makes at least MIN_ROUNDS
 * rounds (4 sigprocmask calls each) however fast the timer's ticks come, so that a slow run
 * (a sanitizer build, a loaded machine) still makes the 10,000 calls programs.sh counts on.
 * random_walk's builds (tests/CMakeLists.txt) take TICKS from WALK_TICKS (their argument is a
 * directory) and make no minimum of rounds, and NO_FAULTS=1 leaves the faults out. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef NO_FAULTS
#define NO_FAULTS 0
#endif
#ifdef WALK_TICKS
#define MIN_ROUNDS 0
#else
#define MIN_ROUNDS 4096
#endif

/* The loop's phase: 0 SIGUSR2 unblocked, 2 blocked; odd while a call changes it. */
static volatile sig_atomic_t ticks, phase, mismatches;
static sigjmp_buf fault_jump;
/* Kept across siglongjmp: static. */
static volatile long rounds;
static volatile int faults, bad_old;
/* An address with nothing mapped. */
static int* volatile nowhere = (int*)8;

static void on_alarm(int sig, siginfo_t* info, void* context) {
  (void)sig;
  (void)info;
  const ucontext_t* uc = context;
  const int blocked = sigismember(&uc->uc_sigmask, SIGUSR2);
  if ((phase == 0 && blocked) || (phase == 2 && !blocked)) mismatches++;
  ticks++;
}

static void on_fault(int sig) {
  (void)sig;
  siglongjmp(fault_jump, 1);
}

int main(int argc, char** argv) {
#ifdef WALK_TICKS
  /* random_walk's build: its argument is a directory. */
  (void)argc;
  (void)argv;
  const int want = WALK_TICKS;
#else
  const int want = argc > 1 ? atoi(argv[1]) : 40;
#endif
  struct sigaction a = {0};
  a.sa_sigaction = on_alarm;
  a.sa_flags = SA_SIGINFO;
  sigaction(SIGALRM, &a, NULL);
  struct sigaction f = {0};
  f.sa_handler = on_fault;
  sigaction(SIGSEGV, &f, NULL);
  sigset_t usr2, segv, none, old;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  sigemptyset(&segv);
  sigaddset(&segv, SIGSEGV);
  sigemptyset(&none);
  struct itimerval it = {{0, 300}, {0, 300}};
  setitimer(ITIMER_REAL, &it, NULL);
  while ((ticks < want || rounds < MIN_ROUNDS) && rounds < 5000000) {
    phase = 1;
    sigprocmask(SIG_BLOCK, &usr2, NULL);
    phase = 2;
    phase = 3;
    sigprocmask(SIG_UNBLOCK, &usr2, NULL);
    phase = 0;
    phase = 1;
    sigprocmask(SIG_SETMASK, &usr2, &old);
    phase = 2;
    if (sigismember(&old, SIGUSR2)) bad_old++;
    phase = 3;
    sigprocmask(SIG_SETMASK, &none, &old);
    phase = 0;
    if (!sigismember(&old, SIGUSR2)) bad_old++;
    if (++rounds % 64 == 0 && !NO_FAULTS) {
      if (sigsetjmp(fault_jump, 1) == 0) {
        sigprocmask(SIG_BLOCK, &segv, &old);
        getsid(0); /* a traced call: replay's kernel has SIGSEGV blocked from here */
        sigprocmask(SIG_SETMASK, &old, NULL);
        *nowhere = 1;
      }
      faults++;
    }
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("lazy_mask: %d ticks %d, masks not the loop's %d, old masks wrong %d, faults handled %d\n",
         want, ticks >= want, mismatches, bad_old, faults > 0 && faults == rounds / 64);
  return 0;
}
