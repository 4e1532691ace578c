// A tracer's single steps from its tracee's syscall stops (ptrace(2): PTRACE_SINGLESTEP after
// PTRACE_SYSCALL, as gdb's `stepi` after `catch syscall` makes them). From a syscall's entry
// stop the call runs and the step ends right after it (the kernel's trap at the syscall's
// exit: SIGTRAP, the result in rax); from its exit stop the step runs one instruction of the
// program. programs.sh ptrace_syscall_step compares the output with a native run's, recorded
// buffered and with every syscall traced.
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static long raw_syscall1(long nr, long a0) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a0) : "rcx", "r11", "memory");
  return r;
}

static void child(void) {
  if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
  raise(SIGSTOP);
  long parent = raw_syscall1(SYS_getppid, 0);
  long group = raw_syscall1(SYS_getpgid, 0);
  _exit(parent == getppid() && group == getpgrp() ? 0 : 1);
}

static struct user_regs_struct regs_of(pid_t pid) {
  struct user_regs_struct r;
  memset(&r, 0, sizeof r);
  ptrace(PTRACE_GETREGS, pid, 0, &r);
  return r;
}

// Resumes pid with PTRACE_SYSCALL until the entry stop of syscall `nr`; then, with `exit`, on
// to its exit stop. False when the child stopped otherwise.
static int syscall_stop(pid_t pid, long nr, int exit) {
  int entry = 1;  // a tracee's syscall stops alternate from its first entry on
  for (;;) {
    int status;
    if (ptrace(PTRACE_SYSCALL, pid, 0, 0) != 0 || waitpid(pid, &status, 0) != pid) return 0;
    if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) return 0;
    if (entry && (long)regs_of(pid).orig_rax == nr) break;
    entry = !entry;
  }
  if (!exit) return 1;
  int status;
  return ptrace(PTRACE_SYSCALL, pid, 0, 0) == 0 && waitpid(pid, &status, 0) == pid &&
         WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP;
}

// Steps pid once and prints where the step stopped, relative to `from`.
static void step(pid_t pid, const char* what, uint64_t from, long expect_rax) {
  int status = 0;
  if (ptrace(PTRACE_SINGLESTEP, pid, 0, 0) != 0 || waitpid(pid, &status, 0) != pid ||
      !WIFSTOPPED(status)) {
    printf("%s: no stop (%#x)\n", what, status);
    return;
  }
  siginfo_t si;
  memset(&si, 0, sizeof si);
  ptrace(PTRACE_GETSIGINFO, pid, 0, &si);
  struct user_regs_struct r = regs_of(pid);
  printf("%s: signal %d, si_code %d, moved %lld, result as expected %d\n", what, WSTOPSIG(status),
         si.si_code, (long long)(r.rip - from), (long)r.rax == expect_rax);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  pid_t pid = fork();
  if (pid == 0) child();
  int status;
  waitpid(pid, &status, 0);  // its SIGSTOP
  if (!syscall_stop(pid, SYS_getppid, 0)) return 1;
  struct user_regs_struct at = regs_of(pid);
  step(pid, "step from getppid's entry", at.rip, getpid());
  if (!syscall_stop(pid, SYS_getpgid, 1)) return 1;
  at = regs_of(pid);
  step(pid, "step from getpgid's exit", at.rip, at.rax);
  ptrace(PTRACE_CONT, pid, 0, 0);
  waitpid(pid, &status, 0);
  printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
