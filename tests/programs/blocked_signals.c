// Test program for debugger traps while the program blocks every signal (as posix_spawn does
// around its clone): a single step or breakpoint there makes the kernel unblock SIGTRAP, and
// the replay must put the mask back. The program asks for its mask after a few instructions
// and makes a different syscall when SIGTRAP is not blocked, so a wrong mask diverges.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

volatile int spin;

int main(void) {
  sigset_t all, now;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  for (int i = 0; i < 100; ++i) spin += i;  // where the test single-steps
  sigprocmask(SIG_BLOCK, NULL, &now);
  if (sigismember(&now, SIGTRAP))
    getpid();
  else
    getppid();
  printf("SIGTRAP %s\n", sigismember(&now, SIGTRAP) ? "blocked" : "not blocked");
  return 0;
}
