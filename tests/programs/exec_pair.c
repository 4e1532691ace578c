// A parent that runs another program (argv[1], with its arguments: exec_pair_child) between
// two rounds of its own work: fork, execv, waitpid. For the debugger tests of breakpoints
// across processes: parent_step here and child_step there are the same code at the same
// address and file offset (section .pair, placed by the build at 0x300000), so a
// breakpoint set in one by address would hit in the other.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

volatile int done;

__attribute__((noinline, section(".pair"))) void parent_step(int i) {
  done += i;  // the parent's own line
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: exec_pair PROGRAM [ARG...]\n");
    return 2;
  }
  for (int i = 0; i < 3; ++i) parent_step(i);
  pid_t pid = fork();
  if (pid == 0) {
    execv(argv[1], argv + 1);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  for (int i = 3; i < 6; ++i) parent_step(i);
  printf("parent %d, child status %d\n", done, WEXITSTATUS(status));
  return 0;
}
