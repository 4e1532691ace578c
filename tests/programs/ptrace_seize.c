// Tracers that attach to their child and that see its group-stops, for programs.sh
// (ptrace_seize): every status, siginfo and event message the program sees, one line each,
// then "ptrace_seize done". Natively and recorded the lines must be the same.
//   1. strace's start: the child stops itself (SIGSTOP); its parent sees that (WSTOPPED),
//      seizes it (PTRACE_SEIZE with PTRACE_O_TRACEEXEC, TRACEEXIT, TRACESYSGOOD), interrupts
//      it, sends SIGCONT and listens (PTRACE_LISTEN) until the group-stop ends; then follows
//      its syscalls to its execve (PTRACE_EVENT_EXEC) and its exit (PTRACE_EVENT_EXIT).
//   2. PTRACE_ATTACH of a running child: the SIGSTOP it sends stops the child.
//   3. A tracee that passes SIGSTOP on stops in a group-stop, which its tracer sees, and goes
//      on after SIGCONT.
//   4. A tracer that writes into its tracee stopped by a fault (PTRACE_POKEDATA), then passes
//      the fault on to the tracee's handler, which prints what was written.
//   5. A tracer that follows its tracee's fork (PTRACE_O_TRACEFORK): the tracee's
//      PTRACE_EVENT_FORK stop, the new task's first stop, and both ends.
//   6. A tracer that follows syscalls up to its tracee's PTRACE_EVENT_EXEC, then resumes it
//      with PTRACE_CONT: no syscall-exit-stop follows.
// With "exec-child" it is the execve's new image: it prints nothing and exits 5.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "show_call.h"

// A wait status as a tracer reads it: the stop's signal and its PTRACE_EVENT_*.
static void show_status(const char* what, pid_t r, pid_t child, int status) {
  static const char* const events[] = {"",           "FORK", "VFORK",   "CLONE",       "EXEC",
                                       "VFORK_DONE", "EXIT", "SECCOMP", [128] = "STOP"};
  if (r != child)
    printf("%s: wait returned %d (%s)\n", what, r, r < 0 ? strerrorname_np(errno) : "other");
  else if (WIFSTOPPED(status))
    printf("%s: stopped by %s%s event %s\n", what, sigabbrev_np(WSTOPSIG(status) & 0x7f),
           WSTOPSIG(status) & 0x80 ? "|0x80" : "", events[(status >> 16) & 0xff]);
  else if (WIFEXITED(status))
    printf("%s: exited with %d\n", what, WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    printf("%s: killed by %s\n", what, sigabbrev_np(WTERMSIG(status)));
  else
    printf("%s: status %#x\n", what, status);
  fflush(stdout);
}

static int wait_for(const char* what, pid_t child, int options) {
  int status = 0;
  pid_t r = waitpid(child, &status, options);
  show_status(what, r, child, status);
  return status;
}

static void strace_start(const char* self) {
  pid_t child = fork();
  if (child == 0) {
    kill(getpid(), SIGSTOP);
    getppid();
    execl(self, "ptrace_seize", "exec-child", (char*)0);
    _exit(11);
  }
  wait_for("stopped by itself", child, WSTOPPED);
  show("seize", ptrace(PTRACE_SEIZE, child, 0,
                       PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT));
  show("seize again", ptrace(PTRACE_SEIZE, child, 0, 0));
  show("interrupt", ptrace(PTRACE_INTERRUPT, child, 0, 0));
  show("sigcont", kill(child, SIGCONT));
  wait_for("seized in its group-stop", child, __WALL);
  int none = 0;
  show("wait with WNOHANG", waitpid(-1, &none, WNOHANG | __WALL));
  siginfo_t si;
  show("getsiginfo", ptrace(PTRACE_GETSIGINFO, child, 0, &si));
  printf("siginfo: %s code %#x from the child %d\n", sigabbrev_np(si.si_signo), si.si_code,
         si.si_pid == child);
  show("listen", ptrace(PTRACE_LISTEN, child, 0, 0));
  wait_for("after listening", child, __WALL);
  show("syscall", ptrace(PTRACE_SYSCALL, child, 0, 0));
  wait_for("its SIGCONT", child, __WALL);
  show("syscall, passing SIGCONT on", ptrace(PTRACE_SYSCALL, child, 0, SIGCONT));
  // getppid's entry and exit, execve's entry, its event, its exit.
  const char* names[] = {"getppid entry", "getppid exit", "execve entry", "execve event",
                         "execve exit"};
  for (int i = 0; i < 5; ++i) {
    int status = wait_for(names[i], child, __WALL);
    if (i == 3) {
      unsigned long msg = 0;
      show("geteventmsg", ptrace(PTRACE_GETEVENTMSG, child, 0, &msg));
      printf("event message: the child's pid %d\n", msg == (unsigned long)child);
    } else {
      struct user_regs_struct regs;
      ptrace(PTRACE_GETREGS, child, 0, &regs);
      printf("syscall %s\n", regs.orig_rax == SYS_getppid  ? "getppid"
                             : regs.orig_rax == SYS_execve ? "execve"
                                                           : "other");
    }
    if (!WIFSTOPPED(status)) return;
    show("syscall", ptrace(PTRACE_SYSCALL, child, 0, 0));
  }
  // On to its exit: its syscalls are skipped.
  int status;
  for (int steps = 0; steps < 10000; ++steps) {
    waitpid(child, &status, __WALL);
    if (!WIFSTOPPED(status) || (status >> 16) == PTRACE_EVENT_EXIT) break;
    ptrace(PTRACE_SYSCALL, child, 0, 0);
  }
  show_status("its exit event", child, child, status);
  unsigned long msg = 0;
  show("geteventmsg", ptrace(PTRACE_GETEVENTMSG, child, 0, &msg));
  printf("event message: exit status %lu\n", WEXITSTATUS(msg));
  show("cont", ptrace(PTRACE_CONT, child, 0, 0));
  wait_for("its end", child, __WALL);
}

// A child that waits for a byte on go[0] (its parent's go-ahead), then runs `then`.
static pid_t child_after_go(int go[2], void (*then)(void)) {
  if (pipe(go) != 0) exit(2);
  pid_t child = fork();
  if (child == 0) {
    char c;
    if (read(go[0], &c, 1) != 1) _exit(2);
    then();
  }
  return child;
}

static void exit_3(void) {
  _exit(3);
}

static void attach_running(void) {
  int go[2];
  pid_t child = child_after_go(go, exit_3);
  show("attach", ptrace(PTRACE_ATTACH, child, 0, 0));
  wait_for("attached", child, 0);
  show("cont, discarding SIGSTOP", ptrace(PTRACE_CONT, child, 0, 0));
  if (write(go[1], "g", 1) != 1) exit(2);
  wait_for("its end", child, 0);
  close(go[0]);
  close(go[1]);
}

static void group_stop(void) {
  pid_t child = fork();
  if (child == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
    raise(SIGSTOP);
    _exit(4);
  }
  wait_for("its SIGSTOP", child, 0);
  show("cont, passing SIGSTOP on", ptrace(PTRACE_CONT, child, 0, SIGSTOP));
  wait_for("its group-stop", child, 0);
  siginfo_t si;
  show("getsiginfo in a group-stop", ptrace(PTRACE_GETSIGINFO, child, 0, &si));
  show("sigcont", kill(child, SIGCONT));
  show("cont", ptrace(PTRACE_CONT, child, 0, 0));
  wait_for("its SIGCONT", child, 0);
  show("cont, passing SIGCONT on", ptrace(PTRACE_CONT, child, 0, SIGCONT));
  wait_for("its end", child, 0);
}

static volatile long marker = 0x1111;

static void on_segv(int sig) {
  (void)sig;
  printf("child: marker %#lx in its SIGSEGV handler\n", marker);
  fflush(stdout);
  _exit(6);
}

static void poke_at_fault(void) {
  pid_t child = fork();
  if (child == 0) {
    signal(SIGSEGV, on_segv);
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
    *(volatile int*)8 = 1;
    _exit(7);
  }
  wait_for("its fault", child, 0);
  show("poke marker", ptrace(PTRACE_POKEDATA, child, (void*)&marker, 0x4444));
  // The child prints from its handler: this process prints once it has ended, so that the
  // lines come in one order.
  long r = ptrace(PTRACE_CONT, child, 0, SIGSEGV);
  int status = 0;
  pid_t ended = waitpid(child, &status, 0);
  show("cont, passing SIGSEGV on", r);
  show_status("its end", ended, child, status);
}

// Forks a child that exits 8, and exits 9 when it saw that (10 otherwise).
static void fork_and_wait(void) {
  pid_t grandchild = fork();
  if (grandchild == 0) _exit(8);
  int status;
  pid_t r = waitpid(grandchild, &status, 0);
  _exit(r == grandchild && WIFEXITED(status) && WEXITSTATUS(status) == 8 ? 9 : 10);
}

static void follow_fork(void) {
  int go[2];
  pid_t child = child_after_go(go, fork_and_wait);
  show("seize with PTRACE_O_TRACEFORK", ptrace(PTRACE_SEIZE, child, 0, PTRACE_O_TRACEFORK));
  if (write(go[1], "g", 1) != 1) exit(2);
  wait_for("its fork", child, 0);
  unsigned long msg = 0;
  show("geteventmsg", ptrace(PTRACE_GETEVENTMSG, child, 0, &msg));
  pid_t grandchild = (pid_t)msg;
  wait_for("the new task", grandchild, __WALL);
  show("cont the new task", ptrace(PTRACE_CONT, grandchild, 0, 0));
  wait_for("the new task's end", grandchild, __WALL);
  show("cont", ptrace(PTRACE_CONT, child, 0, 0));
  int status = wait_for("its SIGCHLD", child, 0);  // the new task's end
  show("cont, passing it on", ptrace(PTRACE_CONT, child, 0, WSTOPSIG(status)));
  wait_for("its end", child, 0);
  close(go[0]);
  close(go[1]);
}

static void exec_then_cont(const char* self) {
  pid_t child = fork();
  if (child == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
    raise(SIGSTOP);
    execl(self, "ptrace_seize", "exec-child", (char*)0);
    _exit(11);
  }
  wait_for("its SIGSTOP", child, 0);
  show("setoptions",
       ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD));
  int status = 0;
  for (int stops = 0; stops < 100; ++stops) {
    ptrace(PTRACE_SYSCALL, child, 0, 0);
    waitpid(child, &status, 0);
    if (!WIFSTOPPED(status) || (status >> 16) == PTRACE_EVENT_EXEC) break;
  }
  show_status("its exec", child, child, status);
  show("cont", ptrace(PTRACE_CONT, child, 0, 0));
  wait_for("its end", child, 0);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "exec-child") == 0) return 5;
  setvbuf(stdout, 0, _IOLBF, 0);
  strace_start(argv[0]);
  attach_running();
  group_stop();
  poke_at_fault();
  follow_fork();
  exec_then_cont(argv[0]);
  printf("ptrace_seize done\n");
  return 0;
}
