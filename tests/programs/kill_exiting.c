// Children that end at once, each killed by its parent right after the fork: some are killed
// while they are already in their exit_group, where the kernel reports the SIGKILL as their
// end (as rr's kill_newborn test finds). The recording keeps that status; a replay's copy ends
// by its exit_group, and must go on (programs.sh kill_exiting). Prints the number of children
// it reaped, the same in every run.
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int reaped = 0;
  for (int i = 0; i < 60; ++i) {
    pid_t child = fork();
    if (child == 0) _exit(3);
    for (int j = 0; j < i % 6; ++j) sched_yield();  // the child gets further each time
    kill(child, SIGKILL);
    int status;
    if (waitpid(child, &status, 0) == child) ++reaped;
  }
  printf("%d children reaped\n", reaped);
  return 0;
}
