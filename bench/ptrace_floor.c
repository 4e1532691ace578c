// The least a ptrace-based recorder or replayer can pay per traced event on this machine: a
// forked child makes EVENTS getppid calls (with bench/many_events' computing between them),
// traced the cheapest way ptrace(2) allows, with nothing of rewind. MODE is one of:
// - "native": no tracer;
// - "emulated": PTRACE_SYSEMU; at each stop PTRACE_GETREGS, rax set to the answer,
//   PTRACE_SETREGS, PTRACE_SYSEMU again (what replay does at a recorded getppid: one stop);
// - "traced": PTRACE_SYSCALL; the call runs; PTRACE_GETREGS at its exit stop (what a recorder
//   does at a traced call, reading nothing else: two stops).
// With "pin" this process first pins itself, and so the child, to the CPU it runs on
// (sched_setaffinity(2)), as replay does (engine/os/cpu_affinity.h). With "faulting" the
// child makes rdtsc and cpuid fault first (prctl(2) PR_SET_TSC, and arch_prctl(2)
// ARCH_SET_CPUID where the CPU can), as rewind's tasks do where the CPU traps rdtsc; the
// child runs neither, so what changes is the kernel's work at each switch to and from it.
// bench/traced_events times each mode beside rewind's record and replay of bench/many_events.
//
// Usage: ptrace_floor MODE [EVENTS [pin] [faulting]]
//   EVENTS defaults to 120000. Exits 0 when the child made exactly EVENTS calls and ended
//   normally, 1 with a message otherwise.
#define _GNU_SOURCE

#include <asm/prctl.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

enum Mode { NATIVE, EMULATED, TRACED };

static volatile unsigned long sink;

/// The child's work: `events` getppid calls with many_events' computing between them. It stops
/// itself first, so that the tracer starts counting at its first call, and makes no other
/// syscall until the last getppid. With `faulting`, rdtsc and cpuid fault in it.
static void child_work(long events, int traced, int faulting) {
  // cpuid faults only where the CPU can (ENODEV otherwise, as on a PVM guest: rewind patches
  // the cpuid sites there instead, engine/os/insn_patch.h).
  if (faulting && (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0 ||
                   (syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0 && errno != ENODEV)))
    _exit(3);
  if (traced) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(2);
    kill(getpid(), SIGSTOP);  // one syscall: the next is the first getppid
  }
  unsigned long x = 1;
  for (long i = 0; i < events; ++i) {
    for (int k = 0; k < 50; ++k) x = x * 6364136223846793005ul + 1442695040888963407ul;
    syscall(SYS_getppid);
  }
  sink = x;
  _exit(0);
}

static void fail(const char* what) {
  perror(what);
  exit(1);
}

/// Waits for `pid` to stop; exits the program with a message when it ended instead.
static void wait_stop(pid_t pid) {
  int status;
  if (waitpid(pid, &status, 0) != pid) fail("waitpid");
  if (!WIFSTOPPED(status)) {
    fprintf(stderr, "ptrace_floor: the child ended before its last call (status %#x)\n", status);
    exit(1);
  }
}

/// One run of `mode` over `events` calls, to the child's end.
static void run(enum Mode mode, long events, int faulting) {
  pid_t pid = fork();
  if (pid < 0) fail("fork");
  if (pid == 0) child_work(events, mode != NATIVE, faulting);
  if (mode != NATIVE) {
    wait_stop(pid);  // its SIGSTOP
    const long request = mode == EMULATED ? PTRACE_SYSEMU : PTRACE_SYSCALL;
    if (ptrace(request, pid, 0, 0) != 0) fail("ptrace resume");
    for (long i = 0; i < events; ++i) {
      struct user_regs_struct regs;
      wait_stop(pid);  // the call's entry
      if (mode == TRACED) {
        if (ptrace(PTRACE_SYSCALL, pid, 0, 0) != 0) fail("PTRACE_SYSCALL");
        wait_stop(pid);  // its exit
      }
      if (ptrace(PTRACE_GETREGS, pid, 0, &regs) != 0) fail("PTRACE_GETREGS");
      if (regs.orig_rax != SYS_getppid) {
        fprintf(stderr, "ptrace_floor: stopped at syscall %llu, not getppid\n", regs.orig_rax);
        exit(1);
      }
      if (mode == EMULATED) {
        regs.rax = (unsigned long long)getpid();  // the child's parent: this process
        if (ptrace(PTRACE_SETREGS, pid, 0, &regs) != 0) fail("PTRACE_SETREGS");
      }
      // After the last call the child runs free to its _exit.
      if (ptrace(i + 1 < events ? request : PTRACE_CONT, pid, 0, 0) != 0) fail("ptrace resume");
    }
  }
  int status;
  if (waitpid(pid, &status, 0) != pid) fail("waitpid");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "ptrace_floor: the child failed (status %#x)\n", status);
    exit(1);
  }
}

/// The mode named `name`, or -1.
static int mode_named(const char* name) {
  static const char* const kNames[] = {"native", "emulated", "traced"};
  for (int m = NATIVE; m <= TRACED; ++m)
    if (!strcmp(name, kNames[m])) return m;
  return -1;
}

int main(int argc, char** argv) {
  const int mode = argc > 1 ? mode_named(argv[1]) : -1;
  const long events = argc > 2 ? atol(argv[2]) : 120000;
  int pin = 0, faulting = 0, bad = mode < 0 || events < 1;
  for (int i = 3; i < argc; ++i) {
    if (!strcmp(argv[i], "pin"))
      pin = 1;
    else if (!strcmp(argv[i], "faulting"))
      faulting = 1;
    else
      bad = 1;
  }
  if (bad) {
    fprintf(stderr, "usage: ptrace_floor native|emulated|traced [EVENTS [pin] [faulting]]\n");
    return 2;
  }
  if (pin) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) fail("sched_setaffinity");
  }
  run((enum Mode)mode, events, faulting);
  return 0;
}
