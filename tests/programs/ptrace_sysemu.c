// A tracer that emulates its tracee's syscalls (PTRACE_SYSEMU, PTRACE_SYSEMU_SINGLESTEP), as
// User-mode Linux and gVisor's ptrace platform do, for programs.sh (ptrace_sysemu): it
// single-steps the child to its first syscall, whose entry stop ends the step; the call is
// not run and returns what the tracer put in rax; PTRACE_SYSEMU then runs the child to its
// next syscall's entry, with no exit stop for the emulated one. The child's exit status says
// whether it saw the tracer's results.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "show_call.h"

// A `syscall` instruction of the program's own (not libc's, which the preload library patches).
static long raw_syscall0(long nr) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"(nr) : "rcx", "r11", "memory");
  return r;
}

static void child_work(void) {
  if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
  raise(SIGSTOP);
  long parent = raw_syscall0(SYS_getppid);  // emulated: 4242
  long uid = raw_syscall0(SYS_getuid);      // emulated: 77
  _exit((parent == 4242 ? 1 : 0) | (uid == 77 ? 2 : 0));
}

// Prints the syscall stop the child stands at and makes the call return `result`.
static void emulate(pid_t child, int status, long result) {
  struct user_regs_struct regs;
  ptrace(PTRACE_GETREGS, child, 0, &regs);
  printf("syscall stop %s: nr %lld, rax %lld\n",
         WSTOPSIG(status) == (SIGTRAP | 0x80) ? "(TRACESYSGOOD)" : "?", (long long)regs.orig_rax,
         (long long)regs.rax);
  regs.rax = result;
  show("emulated, its result set", ptrace(PTRACE_SETREGS, child, 0, &regs));
}

int main(void) {
  setvbuf(stdout, 0, _IOLBF, 0);
  pid_t child = fork();
  if (child == 0) child_work();
  int status;
  waitpid(child, &status, 0);
  printf("child stopped by %s\n", WIFSTOPPED(status) ? sigabbrev_np(WSTOPSIG(status)) : "?");
  show("setoptions", ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACESYSGOOD));
  // Single steps (each a SIGTRAP) until a step ends at a syscall's entry.
  long steps = 0;
  for (;;) {
    if (ptrace(PTRACE_SYSEMU_SINGLESTEP, child, 0, 0) != 0) return 1;
    if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status)) break;
    if (WSTOPSIG(status) != SIGTRAP) break;
    ++steps;
  }
  printf("single steps before the syscall: %s\n", steps > 0 ? "some" : "none");
  emulate(child, status, 4242);
  show("sysemu to the next syscall", ptrace(PTRACE_SYSEMU, child, 0, 0));
  waitpid(child, &status, 0);
  emulate(child, status, 77);
  show("cont", ptrace(PTRACE_CONT, child, 0, 0));
  waitpid(child, &status, 0);
  if (WIFEXITED(status))
    printf("child exited with %d\n", WEXITSTATUS(status));
  else
    printf("child ended by status %#x\n", status);
  return 0;
}
