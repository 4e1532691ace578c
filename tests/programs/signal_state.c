/* The signal-state calls librewind_preload.so buffers and replay makes again for real
 * (rt_sigaction(2), rt_sigprocmask(2)): handlers installed and replaced (the old action read
 * back), SA_RESETHAND, a signal raised while blocked and delivered inside the sigprocmask that
 * unblocks it, a 1 ms timer whose signals come while the mask changes thousands of times, and
 * posix_spawn children, whose glibc code resets each handled signal before its exec (in
 * memory it shares with its parent: clone(CLONE_VM|CLONE_VFORK)). Prints what the program saw,
 * the same natively, recorded and replayed. Usage:
 *   signal_state        the whole program
 *   signal_state child  prints what a spawned child inherited (dispositions, mask) */
#define _GNU_SOURCE
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static volatile sig_atomic_t phase, usr1_count, usr1_phase, usr2_count, ticks, in_blocked,
    violations;

static void on_usr1(int sig) {
  (void)sig;
  usr1_phase = phase;
  usr1_count++;
}

static void on_usr2(int sig, siginfo_t* si, void* ctx) {
  (void)ctx;
  if (sig == SIGUSR2 && si->si_signo == SIGUSR2) usr2_count++;
}

static void on_alarm(int sig) {
  (void)sig;
  ticks++;
  if (in_blocked) violations++;
}

/* Called right after the unblock, so that a debugger can stop there. */
__attribute__((noinline)) static void after_unblock(void) {
  printf("SIGUSR1 delivered while unblocking: %d (count %d)\n", usr1_phase == 1, usr1_count);
}

static int child(void) {
  struct sigaction a;
  sigset_t mask;
  sigaction(SIGUSR1, NULL, &a);
  int usr1_default = a.sa_handler == SIG_DFL;
  sigaction(SIGPIPE, NULL, &a);
  int pipe_ignored = a.sa_handler == SIG_IGN;
  sigprocmask(SIG_BLOCK, NULL, &mask);
  printf("child: SIGUSR1 default %d, SIGPIPE ignored %d, SIGALRM blocked %d\n", usr1_default,
         pipe_ignored, sigismember(&mask, SIGALRM));
  return 0;
}

/* A little work inside the blocked section, so that the timer often fires there. */
static unsigned spin(unsigned seed) {
  for (int i = 0; i < 2000; ++i) seed = seed * 1103515245u + 12345u;
  return seed;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc > 1 && strcmp(argv[1], "child") == 0) return child();

  struct sigaction a, old;
  memset(&a, 0, sizeof a);
  a.sa_handler = on_usr1;
  a.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &a, NULL);
  memset(&a, 0, sizeof a);
  a.sa_sigaction = on_usr2;
  a.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigaction(SIGUSR2, &a, NULL);
  signal(SIGPIPE, SIG_IGN);

  /* Replaced: the old action is the one installed above. */
  memset(&a, 0, sizeof a);
  a.sa_handler = on_usr1;
  sigaddset(&a.sa_mask, SIGUSR2);
  sigaction(SIGUSR1, &a, &old);
  printf("old SIGUSR1 action: on_usr1 %d, SA_RESTART %d\n", old.sa_handler == on_usr1,
         (old.sa_flags & SA_RESTART) != 0);

  /* Raised while blocked: pending, then delivered inside the sigprocmask that unblocks it. */
  sigset_t usr1, pending, prev;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, &prev);
  raise(SIGUSR1);
  sigpending(&pending);
  printf("SIGUSR1 pending while blocked: %d, handled: %d\n", sigismember(&pending, SIGUSR1),
         usr1_count);
  phase = 1;
  sigprocmask(SIG_SETMASK, &prev, NULL);
  phase = 2;
  after_unblock();

  /* SA_RESETHAND: the first delivery puts back SIG_DFL. */
  raise(SIGUSR2);
  sigaction(SIGUSR2, NULL, &old);
  printf("SIGUSR2 handled %d, then default %d\n", usr2_count, old.sa_handler == SIG_DFL);

  /* A 1 ms timer while the mask changes: never handled inside the blocked section. */
  memset(&a, 0, sizeof a);
  a.sa_handler = on_alarm;
  sigaction(SIGALRM, &a, NULL);
  sigset_t alrm;
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  struct itimerval it = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_REAL, &it, NULL);
  unsigned seed = 1;
  int rounds = 0;
  while (ticks < 20 && rounds < 200000) {
    sigprocmask(SIG_BLOCK, &alrm, NULL);
    in_blocked = 1;
    seed = spin(seed);
    in_blocked = 0;
    sigprocmask(SIG_UNBLOCK, &alrm, NULL);
    rounds++;
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("timer: 20 ticks %d, inside the blocked section %d\n", ticks >= 20, violations);

  /* Spawned children: handlers reset to SIG_DFL, SIG_IGN kept, the mask set by the attribute. */
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  sigprocmask(SIG_BLOCK, &alrm, NULL);
  for (int i = 0; i < 4; ++i) {
    pid_t pid;
    char* args[] = {argv[0], "child", NULL};
    int err = posix_spawn(&pid, argv[0], NULL, &attr, args, environ);
    if (err != 0) {
      printf("posix_spawn: %s\n", strerror(err));
      return 1;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child %d: exit %d\n", i, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  posix_spawnattr_destroy(&attr);
  printf("signal_state done\n");
  return 0;
}
