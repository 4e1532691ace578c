// ptrace(2) made by the program itself, as a program that checks that no debugger traces it
// and a child that asks its parent to trace it do: every answer the kernel gives natively.
// Prints one line per call and "ptrace_calls done".
//
// With an argument it does what rewind refuses to record, for the refusal's test:
//   attach   attaches to its own child (ptrace between recorded processes)
//   signal   its child asks to be traced, then raises SIGUSR1 (a stop for its tracer)
//   kill     its child asks to be traced, then the parent kills it with PTRACE_KILL
//   exec     its child asks to be traced, then runs /bin/true (the SIGTRAP after execve)
//   outside PID  attaches to process PID, which runs outside the recording
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

// One call's result as the program sees it: the return value, and errno's name on failure.
static void show(const char* what, long r) {
  if (r == -1)
    printf("%s: -1 %s\n", what, strerrorname_np(errno));
  else
    printf("%s: %ld\n", what, r);
  fflush(stdout);
}

// A child that asks its parent to trace it, says how that went through its exit status (0:
// traced, 1: refused), and runs `then`, or waits to be told to go on (a byte on go[0]). Its
// parent returns once it has asked.
static pid_t traced_child(const int go[2], const char* then) {
  int asked[2];
  if (pipe(asked) != 0) exit(2);
  pid_t child = fork();
  if (child == 0) {
    int r = (int)ptrace(PTRACE_TRACEME, 0, 0, 0);
    if (write(asked[1], "a", 1) != 1) _exit(2);
    if (then && strcmp(then, "signal") == 0) raise(SIGUSR1);
    if (then && strcmp(then, "exec") == 0) execl("/bin/true", "true", (char*)0);
    char c;
    if (read(go[0], &c, 1) != 1) _exit(2);
    _exit(r == 0 ? 0 : 1);
  }
  char c;
  if (read(asked[0], &c, 1) != 1) exit(2);
  close(asked[0]);
  close(asked[1]);
  return child;
}

static int refusal(const char* what, const char* arg) {
  int go[2];
  if (pipe(go) != 0) return 2;
  if (strcmp(what, "attach") == 0) {
    pid_t child = traced_child(go, 0);
    show("attach to the child", ptrace(PTRACE_ATTACH, child, 0, 0));
  } else if (strcmp(what, "kill") == 0) {
    pid_t child = traced_child(go, 0);
    show("kill the child", ptrace(PTRACE_KILL, child, 0, 0));
  } else if (strcmp(what, "outside") == 0 && arg) {
    show("attach to the outside process", ptrace(PTRACE_ATTACH, atoi(arg), 0, 0));
  } else {
    traced_child(go, what);
  }
  int status;
  wait(&status);
  printf("child status %d\n", status);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1) return refusal(argv[1], argc > 2 ? argv[2] : 0);
  // A child that makes sure that no debugger traces it: its parent becomes its tracer, and a
  // second request fails, as under any tracer. It then names tasks it does not trace.
  pid_t checker = fork();
  if (checker == 0) {
    show("traceme", ptrace(PTRACE_TRACEME, 0, 0, 0));
    show("traceme again", ptrace(PTRACE_TRACEME, 0, 0, 0));
    show("getregs of the parent", ptrace(PTRACE_GETREGS, getppid(), 0, 0));
    show("attach to itself", ptrace(PTRACE_ATTACH, getpid(), 0, 0));
    show("seize a process that does not exist", ptrace(PTRACE_SEIZE, 999999999, 0, 0));
    show("peek at a process that does not exist", ptrace(PTRACE_PEEKDATA, -5, 0, 0));
    _exit(0);
  }
  int status = 0;
  waitpid(checker, &status, 0);
  printf("checker exited %d with %d\n", WIFEXITED(status), WEXITSTATUS(status));
  // A child that asks to be traced: its parent traces it, and it ends as usual.
  int go[2];
  if (pipe(go) != 0) return 2;
  pid_t child = traced_child(go, 0);
  // Not stopped: every request but PTRACE_KILL fails while it runs (PTRACE_INTERRUPT is for
  // a PTRACE_SEIZE tracee only).
  show("cont the running child", ptrace(PTRACE_CONT, child, 0, 0));
  show("interrupt the running child", ptrace(PTRACE_INTERRUPT, child, 0, 0));
  if (write(go[1], "g", 1) != 1) return 2;
  show("wait for the child", waitpid(child, &status, 0) == child);
  printf("child exited %d with %d\n", WIFEXITED(status), WEXITSTATUS(status));
  show("cont the child that ended", ptrace(PTRACE_CONT, child, 0, 0));
  // A second child, not traced: its parent's requests fail.
  pid_t other = fork();
  if (other == 0) {
    char c;
    _exit(read(go[0], &c, 1) == 1 ? 0 : 2);
  }
  show("peek at an untraced child", ptrace(PTRACE_PEEKDATA, other, 0, 0));
  if (write(go[1], "g", 1) != 1) return 2;
  waitpid(other, &status, 0);
  // Last, with no child left to signal it, the program checks for a debugger itself: its
  // tracer would be its parent, outside the recording (natively the shell).
  show("traceme at the end", ptrace(PTRACE_TRACEME, 0, 0, 0));
  show("traceme at the end again", ptrace(PTRACE_TRACEME, 0, 0, 0));
  printf("ptrace_calls done\n");
  return 0;
}
