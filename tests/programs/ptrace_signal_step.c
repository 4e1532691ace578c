// A tracer's single steps with a signal (ptrace(2) PTRACE_SINGLESTEP with a signal number, as
// gdb steps a thread that stopped for a signal it passes on). programs.sh ptrace_signal_step
// compares the output with a native run's, recorded buffered and with every syscall traced.
// The child stops for its tracer three times:
//   1. at a SIGUSR1 it sent itself, with a handler: the step with SIGUSR1 stops at the
//      handler's first instruction, before it ran (SIGTRAP, si_code SIGTRAP); two plain steps
//      run two of its instructions; the handler then runs to its end once;
//   2. at a SIGUSR2 it ignores: the step with SIGUSR2 drops it and runs one instruction;
//   3. at a SIGSEGV of its own (a null read), with a handler that jumps back: the step with
//      SIGSEGV stops at that handler's first instruction.
// A second child stops at a SIGUSR1 it has no handler for: the step with it ends the child.
// With the argument "raise" it only raises a SIGUSR1 it handles, for gdb's `stepi` at that
// signal's stop (gdb steps with the signal it passes on).
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int usr1_handled, segv_handled;
static sigjmp_buf back;

__attribute__((noinline)) static void on_usr1(int sig) {
  (void)sig;
  usr1_handled++;
}

__attribute__((noinline)) static void on_segv(int sig) {
  (void)sig;
  segv_handled++;
  siglongjmp(back, 1);
}

static void child(void) {
  if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0) _exit(10);
  signal(SIGUSR1, on_usr1);
  signal(SIGUSR2, SIG_IGN);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_segv;
  sa.sa_flags = SA_NODEFER;
  sigaction(SIGSEGV, &sa, NULL);
  raise(SIGUSR1);
  raise(SIGUSR2);
  if (sigsetjmp(back, 1) == 0) {
    volatile int* null = (volatile int*)(uintptr_t)(getpid() < 0);  // 0, unknown to the compiler
    (void)*null;
  }
  _exit(usr1_handled == 1 && segv_handled == 1 ? 0 : 1);
}

/// Waits for `pid`'s next stop; returns its signal, or -1 when it did not stop.
static int next_stop(pid_t pid) {
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) return -1;
  return WSTOPSIG(status);
}

static uint64_t rip_of(pid_t pid) {
  struct user_regs_struct r;
  ptrace(PTRACE_GETREGS, pid, NULL, &r);
  return r.rip;
}

/// Steps `pid` with `sig` and prints where the step stopped against `handler`.
static void step_with(pid_t pid, int sig, const char* what, uintptr_t handler) {
  uint64_t before = rip_of(pid);
  ptrace(PTRACE_SINGLESTEP, pid, NULL, (void*)(uintptr_t)sig);
  int stop = next_stop(pid);
  siginfo_t si;
  memset(&si, 0, sizeof si);
  ptrace(PTRACE_GETSIGINFO, pid, NULL, &si);
  uint64_t after = rip_of(pid);
  printf("%s: stop %s, si_code %d, at the handler %d, moved %d\n", what, strsignal(stop),
         si.si_code, after == handler, after != before);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc > 1 && strcmp(argv[1], "raise") == 0) {
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    printf("handled %d\n", usr1_handled);
    return 0;
  }
  pid_t pid = fork();
  if (pid == 0) child();
  if (next_stop(pid) != SIGUSR1) return 2;
  step_with(pid, SIGUSR1, "step with SIGUSR1", (uintptr_t)on_usr1);
  uint64_t at = rip_of(pid);
  int moved = 0;
  for (int i = 0; i < 2; ++i) {
    ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL);
    moved += next_stop(pid) == SIGTRAP && rip_of(pid) != at;
    at = rip_of(pid);
  }
  printf("two steps in the handler: %d moved\n", moved);
  ptrace(PTRACE_CONT, pid, NULL, NULL);
  if (next_stop(pid) != SIGUSR2) return 3;
  step_with(pid, SIGUSR2, "step with ignored SIGUSR2", (uintptr_t)on_usr1);
  ptrace(PTRACE_CONT, pid, NULL, NULL);
  if (next_stop(pid) != SIGSEGV) return 4;
  step_with(pid, SIGSEGV, "step with SIGSEGV", (uintptr_t)on_segv);
  ptrace(PTRACE_CONT, pid, NULL, NULL);
  int status;
  waitpid(pid, &status, 0);
  printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  pid = fork();
  if (pid == 0) {
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0) _exit(10);
    raise(SIGUSR1);  // no handler: the default action ends it
    _exit(0);
  }
  if (next_stop(pid) != SIGUSR1) return 5;
  ptrace(PTRACE_SINGLESTEP, pid, NULL, (void*)(uintptr_t)SIGUSR1);
  waitpid(pid, &status, 0);
  printf("second child: killed by %s\n",
         WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "nothing");
  return 0;
}
