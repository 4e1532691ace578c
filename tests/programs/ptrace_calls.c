// ptrace(2) made by the program itself, as a program that checks that no debugger traces it
// and a child that asks its parent to trace it do: every answer the kernel gives natively.
// Prints one line per call and "ptrace_calls done".
//
// With an argument it does what rewind refuses to record, for the refusal's test:
//   step-signal   single-steps its stopped tracee with a stop signal (PTRACE_SINGLESTEP)
//   step-syscall  single-steps its child over a `syscall` instruction that forks
//   outside-stop  asks to be traced by its parent, outside the recording, then raises SIGUSR1
// With "step-rdtsc" or "step-cpuid" it single-steps its child over that instruction, with
// "step-exit" over the `syscall` instruction of its exit (the step ends with its end),
// with "refault" it resumes its faulting child without the fault's signal (as a debugger
// that mends its tracee does),
// and with "syscalls" it follows its child's syscalls (PTRACE_SYSCALL), which rewind records
// only where it traces every syscall (--no-syscall-buffer): a small strace, that also
// changes a call at its entry and a result at its exit.
//   outside PID   attaches to process PID, which runs outside the recording
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "show_call.h"

// A child that asks its parent to trace it, says how that went through its exit status (0:
// traced, 1: refused), and waits to be told to go on (a byte on go[0]). Its parent returns
// once it has asked.
static pid_t traced_child(const int go[2]) {
  int asked[2];
  if (pipe(asked) != 0) exit(2);
  pid_t child = fork();
  if (child == 0) {
    int r = (int)ptrace(PTRACE_TRACEME, 0, 0, 0);
    if (write(asked[1], "a", 1) != 1) _exit(2);
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

// What the traced child of tracer_session() sets between its stops, and reads by PEEKDATA.
static volatile long marker = 0x1111;
static volatile sig_atomic_t trapped_sigchld = 0, child_handled = 0;
static volatile int child_hup_code = -1, child_hup_pid = -1;

static void on_sigchld(int sig, siginfo_t* si, void* ctx) {
  (void)sig, (void)ctx;
  if (si->si_code == CLD_TRAPPED) trapped_sigchld = 1;
}

static void on_child_signal(int sig, siginfo_t* si, void* ctx) {
  (void)ctx;
  if (sig == SIGHUP) {
    child_hup_code = si->si_code;
    child_hup_pid = si->si_pid;
  }
  child_handled |= sig == SIGUSR2 ? 1 : sig == SIGHUP ? 2 : 0;
}

// The traced child: stops for SIGUSR1 (its tracer writes marker and discards the signal),
// adds to marker and stops for SIGUSR2 (passed on to its handler), stops for SIGUSR1 at the
// exit of its own tgkill (its tracer sets the call's result and turns the signal into
// SIGHUP), then runs this program again as "exec-child", stopping after the execve.
static void traced_work(const char* self) {
  struct sigaction sa = {0};
  sa.sa_sigaction = on_child_signal;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR2, &sa, 0);
  sigaction(SIGHUP, &sa, 0);
  if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
  usleep(100000);  // its tracer waits meanwhile: its stop ends that wait
  raise(SIGUSR1);
  marker += 0x1000;
  raise(SIGUSR2);
  long r = syscall(SYS_tgkill, getpid(), gettid(), SIGUSR1);
  printf("child: tgkill returned %ld, handled %d, SIGHUP code %d from its parent %d, marker %#lx\n",
         r, child_handled, child_hup_code, child_hup_pid == getppid(), marker);
  fflush(stdout);
  execl(self, "ptrace_calls", "exec-child", (char*)0);
  _exit(11);
}

static void show_stop(const char* what, int status) {
  if (WIFSTOPPED(status))
    printf("%s: stopped by %s\n", what, sigabbrev_np(WSTOPSIG(status)));
  else if (WIFEXITED(status))
    printf("%s: exited with %d\n", what, WEXITSTATUS(status));
  else
    printf("%s: status %#x\n", what, status);
  fflush(stdout);
}

// A parent that traces its child, as a crash reporter or a small debugger does: waits for
// its stops (wait4 and waitid), reads it (PEEKDATA, GETREGS, GETFPREGS, GETREGSET,
// GETSIGINFO) and resumes it, discarding, passing on or changing the signal.
static void tracer_session(const char* self) {
  struct sigaction sa = {0};
  sa.sa_sigaction = on_sigchld;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigaction(SIGCHLD, &sa, 0);
  pid_t child = fork();
  if (child == 0) traced_work(self);
  int status = 0;
  waitpid(child, &status, 0);  // waits while the child sleeps
  show_stop("first stop", status);
  siginfo_t si;
  show("getsiginfo", ptrace(PTRACE_GETSIGINFO, child, 0, &si));
  printf("siginfo: %s code %d from the child %d\n", sigabbrev_np(si.si_signo), si.si_code,
         si.si_pid == child);
  struct user_regs_struct regs;
  show("getregs", ptrace(PTRACE_GETREGS, child, 0, &regs));
  printf("stopped after its tgkill: %d, which returned %lld\n", regs.orig_rax == SYS_tgkill,
         (long long)regs.rax);
  struct user_regs_struct set;
  struct iovec io = {&set, sizeof set};
  show("getregset NT_PRSTATUS", ptrace(PTRACE_GETREGSET, child, NT_PRSTATUS, &io));
  printf("regset: %zu bytes, the same rip and rsp: %d\n", io.iov_len,
         set.rip == regs.rip && set.rsp == regs.rsp);
  struct user_fpregs_struct fp;
  show("getfpregs", ptrace(PTRACE_GETFPREGS, child, 0, &fp));
  printf("mxcsr %#x\n", fp.mxcsr);
  long word = ptrace(PTRACE_PEEKDATA, child, (void*)&marker, 0);
  printf("marker before: %#lx\n", word);
  show("peek at an unmapped address", ptrace(PTRACE_PEEKDATA, child, (void*)8, 0));
  show("setoptions",
       ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL));
  show("poke marker", ptrace(PTRACE_POKEDATA, child, (void*)&marker, 0x3333));
  show("cont, discarding SIGUSR1", ptrace(PTRACE_CONT, child, 0, 0));
  usleep(100000);  // it stops again meanwhile: the next wait finds the stop at once
  siginfo_t info = {0};
  show("waitid", waitid(P_PID, child, &info, WEXITED | WSTOPPED));
  printf("waitid: code %s, status %s\n", info.si_code == CLD_TRAPPED ? "CLD_TRAPPED" : "other",
         sigabbrev_np(info.si_status));
  printf("marker after: %#lx\n", ptrace(PTRACE_PEEKDATA, child, (void*)&marker, 0));
  show("cont, passing SIGUSR2 on", ptrace(PTRACE_CONT, child, 0, SIGUSR2));
  waitpid(child, &status, 0);
  show_stop("third stop", status);
  show("getregs", ptrace(PTRACE_GETREGS, child, 0, &regs));
  printf("stopped after its tgkill: %d, which returned %lld\n", regs.orig_rax == SYS_tgkill,
         (long long)regs.rax);
  regs.rax = 42;
  show("setregs: the call returns 42", ptrace(PTRACE_SETREGS, child, 0, &regs));
  // The child prints before its next stop: this process prints once that stop is seen, so
  // that the lines come in one order.
  long r = ptrace(PTRACE_CONT, child, 0, SIGHUP);
  waitpid(child, &status, 0);
  show("cont with SIGHUP instead", r);
  show_stop("after its execve", status);
  show("getsiginfo", ptrace(PTRACE_GETSIGINFO, child, 0, &si));
  printf("siginfo: %s code %d from the child %d\n", sigabbrev_np(si.si_signo), si.si_code,
         si.si_pid == child);
  r = ptrace(PTRACE_CONT, child, 0, 0);
  waitpid(child, &status, 0);
  show("cont", r);
  show_stop("its end", status);
  printf("SIGCHLD for a stop: %d\n", (int)trapped_sigchld);
  signal(SIGCHLD, SIG_DFL);
}

// A child that asks to be traced and stops by SIGUSR1, or by a fault (SIGSEGV) when `fault`;
// returns once its parent has waited for that stop.
static pid_t stopped_child(int fault) {
  pid_t child = fork();
  if (child == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
    if (fault) *(volatile int*)0 = 1;
    raise(SIGUSR1);
    _exit(0);
  }
  int status;
  waitpid(child, &status, 0);
  show_stop("child", status);
  return child;
}

// Two more tracers: one that kills its stopped tracee (PTRACE_KILL), and a crash reporter:
// its child faults, it reads where and why, and passes the fault on.
static void kill_and_crash_sessions(void) {
  pid_t child = stopped_child(0);
  show("kill", ptrace(PTRACE_KILL, child, 0, 0));
  int status;
  waitpid(child, &status, 0);
  printf("killed: %d by %s\n", WIFSIGNALED(status), sigabbrev_np(WTERMSIG(status)));
  child = stopped_child(1);
  siginfo_t si;
  show("getsiginfo", ptrace(PTRACE_GETSIGINFO, child, 0, &si));
  printf("fault: %s code %d at %p\n", sigabbrev_np(si.si_signo), si.si_code, si.si_addr);
  show("cont, passing the fault on", ptrace(PTRACE_CONT, child, 0, SIGSEGV));
  waitpid(child, &status, 0);
  printf("crashed: %d by %s\n", WIFSIGNALED(status), sigabbrev_np(WTERMSIG(status)));
}

// Tracers that end while their tracee stands stopped (by SIGUSR1): the tracee goes on with
// its signal, which ends it, or is killed when its tracer set PTRACE_O_EXITKILL (ptrace(2)).
// This process, a subreaper, reaps it.
static void orphaned_tracees(void) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  for (int exitkill = 0; exitkill < 2; ++exitkill) {
    int pid_pipe[2];
    if (pipe(pid_pipe) != 0) exit(2);
    pid_t middle = fork();
    if (middle == 0) {
      pid_t child = stopped_child(0);
      if (exitkill) ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_EXITKILL);
      if (write(pid_pipe[1], &child, sizeof child) != sizeof child) _exit(2);
      _exit(0);
    }
    pid_t child = 0;
    if (read(pid_pipe[0], &child, sizeof child) != sizeof child) exit(2);
    int status;
    waitpid(middle, &status, 0);
    waitpid(child, &status, 0);
    printf("tracee of a tracer that ended (exitkill %d): ended by %s\n", exitkill,
           WIFSIGNALED(status) ? sigabbrev_np(WTERMSIG(status)) : "exit");
    close(pid_pipe[0]);
    close(pid_pipe[1]);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

// The child of syscall_session(): its calls, and whether they returned what its tracer made
// them return, in its exit status.
static void followed_work(void) {
  if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
  raise(SIGSTOP);
  long uid = syscall(SYS_getppid);          // turned into getuid at its entry
  long closed = syscall(SYS_close, 12345);  // EBADF, turned into 0 at its exit
  _exit((uid == (long)getuid() ? 1 : 0) | (closed == 0 ? 2 : 0));
}

static int syscall_session(void) {
  pid_t child = fork();
  if (child == 0) followed_work();
  int status;
  waitpid(child, &status, 0);
  show_stop("child", status);
  show("setoptions", ptrace(PTRACE_SETOPTIONS, child, 0, PTRACE_O_TRACESYSGOOD));
  show("syscall, discarding SIGSTOP", ptrace(PTRACE_SYSCALL, child, 0, 0));
  for (int stops = 0; stops < 40; ++stops) {
    waitpid(child, &status, 0);
    if (!WIFSTOPPED(status)) break;
    struct __ptrace_syscall_info info;
    long size = ptrace(PTRACE_GET_SYSCALL_INFO, child, sizeof info, &info);
    siginfo_t si;
    ptrace(PTRACE_GETSIGINFO, child, 0, &si);
    if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
      printf("entry %s (%ld bytes, siginfo code %#x): %lld\n",
             WSTOPSIG(status) == (SIGTRAP | 0x80) ? "stop" : "?", size, si.si_code,
             (long long)info.entry.nr);
      if (info.entry.nr == SYS_getppid) {
        struct user_regs_struct regs;
        ptrace(PTRACE_GETREGS, child, 0, &regs);
        regs.orig_rax = SYS_getuid;
        show("setregs: getuid instead", ptrace(PTRACE_SETREGS, child, 0, &regs));
      }
    } else if (info.op == PTRACE_SYSCALL_INFO_EXIT) {
      printf("exit (%ld bytes): error %d, %s\n", size, info.exit.is_error,
             info.exit.rval == -EBADF ? "EBADF" : "a value");
      if (info.exit.rval == -EBADF) {
        struct user_regs_struct regs;
        ptrace(PTRACE_GETREGS, child, 0, &regs);
        regs.rax = 0;
        show("setregs: 0 instead", ptrace(PTRACE_SETREGS, child, 0, &regs));
      }
    }
    ptrace(PTRACE_SYSCALL, child, 0, 0);
  }
  printf("child exited %d with %d\n", WIFEXITED(status), WEXITSTATUS(status));
  return 0;
}

// Single-steps a child over an rdtsc or a cpuid (`cpuid`), which the recorder emulates (a
// cpuid it replaces by a faulting stand-in): the step's stop, its si_code, how far the pc
// moved, whether the instruction's registers changed, and the child's end.
static int emulated_step(int cpuid) {
  pid_t child = fork();
  if (child == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
    // Stopped by the int3's SIGTRAP right before the instruction.
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (cpuid)
      __asm__ volatile("int3\n\tcpuid" : "+a"(a), "+b"(b), "+c"(c), "+d"(d));
    else
      __asm__ volatile("int3\n\trdtsc" : "+a"(a), "+d"(d));
    _exit(a == 0 && d == 0 ? 1 : 0);  // 0: the instruction gave it values
  }
  int status;
  waitpid(child, &status, 0);
  show_stop("child", status);
  struct user_regs_struct before, after;
  ptrace(PTRACE_GETREGS, child, 0, &before);
  show("step over it", ptrace(PTRACE_SINGLESTEP, child, 0, 0));
  waitpid(child, &status, 0);
  show_stop("after the step", status);
  siginfo_t si;
  ptrace(PTRACE_GETSIGINFO, child, 0, &si);
  ptrace(PTRACE_GETREGS, child, 0, &after);
  printf("step: si_code %d, pc moved %lld bytes, si_addr is the pc: %s\n", si.si_code,
         (long long)(after.rip - before.rip),
         (unsigned long long)si.si_addr == after.rip ? "yes" : "no");
  show("step again", ptrace(PTRACE_SINGLESTEP, child, 0, 0));
  waitpid(child, &status, 0);
  show_stop("after the second step", status);
  ptrace(PTRACE_CONT, child, 0, 0);
  waitpid(child, &status, 0);
  printf("child exited %d with %d\n", WIFEXITED(status), WEXITSTATUS(status));
  return 0;
}

// A child stopped by the int3's SIGTRAP right before a `syscall` instruction making call `nr`
// (with 5 as its first argument), single-stepped over it by its parent; the child's next
// stop or end is printed.
static int step_over_syscall(long nr) {
  pid_t child = fork();
  if (child == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
    long r;
    __asm__ volatile("int3\n\tsyscall" : "=a"(r) : "a"(nr), "D"(5) : "rcx", "r11", "memory");
    _exit(0);
  }
  int status;
  waitpid(child, &status, 0);
  show_stop("child", status);
  show("step over the syscall", ptrace(PTRACE_SINGLESTEP, child, 0, 0));
  waitpid(child, &status, 0);
  show_stop("after the step", status);
  return 0;
}

static void on_usr1_trap(int sig) {
  (void)sig;
  __asm__ volatile("int3");  // its tracer steps from here to the handler's rt_sigreturn
}

// A child stopped inside its SIGUSR1 handler, single-stepped by its parent up to the
// `syscall` of the handler's rt_sigreturn (libc's restorer) and over it: the step ends back
// where the signal interrupted the child, which then ends with status 6.
static int step_over_sigreturn(void) {
  pid_t child = fork();
  if (child == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
    signal(SIGUSR1, on_usr1_trap);
    raise(SIGUSR1);
    _exit(6);
  }
  int status;
  waitpid(child, &status, 0);
  show_stop("child", status);  // SIGUSR1: passed on
  struct user_regs_struct at_signal;
  ptrace(PTRACE_GETREGS, child, 0, &at_signal);
  ptrace(PTRACE_CONT, child, 0, SIGUSR1);
  waitpid(child, &status, 0);
  show_stop("in the handler", status);
  struct user_regs_struct regs;
  int steps = 0;
  for (; steps < 200; ++steps) {
    ptrace(PTRACE_GETREGS, child, 0, &regs);
    long word = ptrace(PTRACE_PEEKTEXT, child, regs.rip, 0);
    if ((word & 0xffff) == 0x050f && regs.rax == SYS_rt_sigreturn) break;  // syscall
    ptrace(PTRACE_SINGLESTEP, child, 0, 0);
    waitpid(child, &status, 0);
    if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) break;
  }
  printf("at the rt_sigreturn: %s\n", steps < 200 && WIFSTOPPED(status) ? "yes" : "no");
  show("step over the syscall", ptrace(PTRACE_SINGLESTEP, child, 0, 0));
  waitpid(child, &status, 0);
  show_stop("after the step", status);
  struct user_regs_struct after;
  ptrace(PTRACE_GETREGS, child, 0, &after);
  siginfo_t si;
  ptrace(PTRACE_GETSIGINFO, child, 0, &si);
  printf("step: si_code %d, back where the signal came: %s\n", si.si_code,
         after.rip == at_signal.rip && after.rsp == at_signal.rsp ? "yes" : "no");
  ptrace(PTRACE_CONT, child, 0, 0);
  waitpid(child, &status, 0);
  show_stop("then", status);
  return 0;
}

// Where the child of refault_session resumes once its tracer moved it there: its end.
static void recovered(void) {
  _exit(3);
}

static volatile long usr1_handled;  // in refault_session's child, which its tracer peeks
static void on_usr1_count(int sig) {
  (void)sig;
  ++usr1_handled;
}

// A ud2 (SIGILL) that its tracer overwrites with two nops, then a store through a null
// pointer (SIGSEGV).
__attribute__((noinline)) static void faulting_code(void) {
  __asm__ volatile(".globl refault_site\nrefault_site: ud2" ::: "memory");
  *(volatile int*)0 = 1;
}

// A tracer that resumes its faulting child without the fault's signal (ptrace(2): the
// signal is suppressed), as a debugger that mends its tracee does: the instruction runs
// again and faults again; overwritten, the new instruction runs; with its registers
// changed (PTRACE_SETREGS), the child goes on where they say; resumed with another
// signal, that signal's handler runs instead of the fault's. The last resume is a
// PTRACE_DETACH, as rr's ptrace test does it.
static int refault_session(void) {
  extern char refault_site[];
  pid_t child = fork();
  if (child == 0) {
    if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
    signal(SIGUSR1, on_usr1_count);
    faulting_code();
    _exit(0);
  }
  int status;
  waitpid(child, &status, 0);
  show_stop("child", status);
  struct user_regs_struct first, regs;
  ptrace(PTRACE_GETREGS, child, 0, &first);
  show("cont without the fault", ptrace(PTRACE_CONT, child, 0, 0));
  waitpid(child, &status, 0);
  show_stop("the instruction ran again", status);
  ptrace(PTRACE_GETREGS, child, 0, &regs);
  printf("at the same instruction: %s\n",
         regs.rip == first.rip && regs.rip == (unsigned long long)refault_site ? "yes" : "no");
  errno = 0;
  long word = ptrace(PTRACE_PEEKTEXT, child, refault_site, 0);
  printf("peek: errno %d, ud2 there: %s\n", errno, (word & 0xffff) == 0x0b0f ? "yes" : "no");
  show("poke two nops", ptrace(PTRACE_POKETEXT, child, refault_site, (word & ~0xffffL) | 0x9090));
  show("cont without the fault", ptrace(PTRACE_CONT, child, 0, 0));
  waitpid(child, &status, 0);
  show_stop("after the nops", status);
  siginfo_t si;
  show("getsiginfo", ptrace(PTRACE_GETSIGINFO, child, 0, &si));
  printf("fault: %s code %d at %p\n", sigabbrev_np(si.si_signo), si.si_code, si.si_addr);
  // Another signal instead of the fault's: its handler runs, and the store faults again.
  show("cont with SIGUSR1 instead", ptrace(PTRACE_CONT, child, 0, SIGUSR1));
  waitpid(child, &status, 0);
  show_stop("after the handler", status);
  printf("SIGUSR1 handled: %ld\n", ptrace(PTRACE_PEEKDATA, child, &usr1_handled, 0));
  ptrace(PTRACE_GETREGS, child, 0, &regs);
  regs.rip = (unsigned long long)recovered;
  regs.rsp = ((regs.rsp - 256) & ~15ull) - 8;  // as after a call
  show("setregs", ptrace(PTRACE_SETREGS, child, 0, &regs));
  show("detach without the fault", ptrace(PTRACE_DETACH, child, 0, 0));
  waitpid(child, &status, 0);
  show_stop("then", status);
  return 0;
}

static int refusal(const char* what, const char* arg) {
  if (strcmp(what, "step-signal") == 0) {
    show("step with a stop signal", ptrace(PTRACE_SINGLESTEP, stopped_child(0), 0, SIGTSTP));
  } else if (strcmp(what, "step-syscall") == 0) {
    step_over_syscall(SYS_fork);
  } else if (strcmp(what, "outside-stop") == 0) {
    show("traceme", ptrace(PTRACE_TRACEME, 0, 0, 0));
    raise(SIGUSR1);
  } else if (strcmp(what, "outside") == 0 && arg) {
    show("attach to the outside process", ptrace(PTRACE_ATTACH, atoi(arg), 0, 0));
  }
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, 0, _IOLBF, 0);  // each line written when printed, before the next process's
  if (argc > 1 && strcmp(argv[1], "exec-child") == 0) {
    printf("the child runs after its execve\n");
    return 7;
  }
  if (argc > 1 && strcmp(argv[1], "syscalls") == 0) return syscall_session();
  if (argc > 1 && strcmp(argv[1], "step-rdtsc") == 0) return emulated_step(0);
  if (argc > 1 && strcmp(argv[1], "step-cpuid") == 0) return emulated_step(1);
  if (argc > 1 && strcmp(argv[1], "step-exit") == 0) return step_over_syscall(SYS_exit);
  if (argc > 1 && strcmp(argv[1], "step-sigreturn") == 0) return step_over_sigreturn();
  if (argc > 1 && strcmp(argv[1], "refault") == 0) return refault_session();
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
  pid_t child = traced_child(go);
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
  tracer_session(argv[0]);
  kill_and_crash_sessions();
  orphaned_tracees();
  // Last, with no child left to signal it, the program checks for a debugger itself: its
  // tracer would be its parent, outside the recording (natively the shell).
  show("traceme at the end", ptrace(PTRACE_TRACEME, 0, 0, 0));
  show("traceme at the end again", ptrace(PTRACE_TRACEME, 0, 0, 0));
  printf("ptrace_calls done\n");
  return 0;
}
