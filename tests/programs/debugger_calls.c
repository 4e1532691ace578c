// A small debugger, doing to its child what gdb does to an inferior: it reads and writes the
// child's memory through /proc/PID/mem, puts an int3 breakpoint on a function, and at each hit
// moves the pc back, takes the breakpoint out, single-steps the instruction and puts it back;
// it follows the child's vfork with PTRACE_O_TRACEVFORK and TRACEVFORKDONE. Every line is
// the same natively and under rewind (tests/integration/programs.sh debugger_calls).
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long secret = 5;
static volatile int counter = 0;

__attribute__((noinline)) int target(int x) {
  counter += x;
  return counter;
}

static void inferior(void) {
  ptrace(PTRACE_TRACEME, 0, 0, 0);
  raise(SIGSTOP);
  for (int i = 1; i <= 3; ++i) target(i * 10);
  printf("inferior: secret %ld, counter %d\n", secret, counter);
  // Its own int3 right before a syscall instruction (getppid): the debugger steps over it.
  long r;
  __asm__ volatile("int3\n\tsyscall" : "=a"(r) : "a"(SYS_getppid) : "rcx", "r11", "memory");
  printf("inferior: getppid stepped over: %s\n", r == getppid() ? "its parent" : "wrong");
  // And before a repeated string instruction, which the debugger steps one repetition at a
  // time.
  char buf[8] = {0}, *to = buf;
  unsigned long n = 3;
  __asm__ volatile("int3\n\trep stosb" : "+D"(to), "+c"(n) : "a"('A') : "memory");
  printf("inferior: rep stosb stepped through: %s\n", buf);
  pid_t v = vfork();
  if (v == 0) _exit(7);
  int status = 0;
  waitpid(v, &status, 0);
  printf("inferior: its vfork child exited with %d\n", WEXITSTATUS(status));
  exit(3);
}

static void mem_io(int fd, int write, uint64_t at, void* bytes, size_t n, const char* what) {
  ssize_t r = write ? pwrite(fd, bytes, n, (off_t)at) : pread(fd, bytes, n, (off_t)at);
  if (r != (ssize_t)n) {
    printf("%s: %zd\n", what, r);
    exit(1);
  }
}

// The line after each single step; a breakpoint for the test's gdb session over the trace.
__attribute__((noinline)) static void report_step(int hit, long r, int status, int code,
                                                  int one_on) {
  printf("singlestep %ld after hit %d: stopped by signal %d (code %d), %s\n", r, hit,
         WSTOPSIG(status), code, one_on ? "one instruction on" : "elsewhere");
}

int main(void) {
  setvbuf(stdout, 0, _IOLBF, 0);  // each line written when printed, before the child's
  pid_t child = fork();
  if (child == 0) inferior();
  int status;
  waitpid(child, &status, 0);
  printf("stopped by signal %d\n", WSTOPSIG(status));
  long opts = PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE | PTRACE_O_EXITKILL;
  printf("setoptions: %ld\n", ptrace(PTRACE_SETOPTIONS, child, 0, opts));
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", child);
  int mem = open(path, O_RDWR);
  if (mem < 0) {
    perror("open");
    return 1;
  }
  long value;
  mem_io(mem, 0, (uint64_t)&secret, &value, sizeof value, "read secret");
  printf("secret read through /proc/PID/mem: %ld\n", value);
  value = 42;
  mem_io(mem, 1, (uint64_t)&secret, &value, sizeof value, "write secret");
  // The breakpoint, over the first byte of target(), written as gdb writes it.
  const uint64_t bp = (uint64_t)&target;
  unsigned char orig, int3 = 0xcc;
  mem_io(mem, 0, bp, &orig, 1, "read code");
  mem_io(mem, 1, bp, &int3, 1, "write int3");
  ptrace(PTRACE_CONT, child, 0, 0);
  int hits = 0, vfork_events = 0, vfork_done = 0, new_task_stops = 0, sigchld_stops = 0;
  for (;;) {
    pid_t who = waitpid(-1, &status, __WALL);
    if (who < 0) break;
    if (who != child) {  // the vfork child, traced too: its first stop, then its end
      if (WIFSTOPPED(status)) {
        ++new_task_stops;
        ptrace(PTRACE_CONT, who, 0, 0);
      }
      continue;
    }
    if (WIFEXITED(status)) {
      printf("inferior exited with %d\n", WEXITSTATUS(status));
      break;
    }
    if (!WIFSTOPPED(status)) continue;
    int event = status >> 16;
    if (event == PTRACE_EVENT_VFORK || event == PTRACE_EVENT_VFORK_DONE) {
      unsigned long msg = 0;
      ptrace(PTRACE_GETEVENTMSG, child, 0, &msg);
      if (event == PTRACE_EVENT_VFORK)
        ++vfork_events;
      else
        ++vfork_done;
      if (msg == 0) printf("event %d without the child's pid\n", event);
      ptrace(PTRACE_CONT, child, 0, 0);
      continue;
    }
    struct user_regs_struct regs;
    ptrace(PTRACE_GETREGS, child, 0, &regs);
    if (WSTOPSIG(status) == SIGCHLD) {  // its vfork child's end: passed on
      ++sigchld_stops;
      ptrace(PTRACE_CONT, child, 0, SIGCHLD);
      continue;
    }
    unsigned char before = 0;
    mem_io(mem, 0, regs.rip - 1, &before, 1, "read the byte before the pc");
    unsigned char next[2] = {0, 0};
    mem_io(mem, 0, regs.rip, next, 2, "read the code at the pc");
    if (WSTOPSIG(status) == SIGTRAP && before == 0xcc && next[0] == 0xf3 && next[1] == 0xaa) {
      // The inferior's own int3, before its rep stosb: a step per repetition.
      const uint64_t at = regs.rip;
      for (int steps = 1; steps <= 5 && regs.rip == at; ++steps) {
        ptrace(PTRACE_SINGLESTEP, child, 0, 0);
        waitpid(child, &status, 0);
        ptrace(PTRACE_GETREGS, child, 0, &regs);
        printf("rep step %d: signal %d, rcx %llu, %s\n", steps, WSTOPSIG(status),
               (unsigned long long)regs.rcx, regs.rip == at ? "still on it" : "past it");
      }
      ptrace(PTRACE_CONT, child, 0, 0);
      continue;
    }
    if (WSTOPSIG(status) == SIGTRAP && regs.rip != bp + 1 && before == 0xcc) {
      // The inferior's own int3, before its syscall: one step runs the whole call.
      long r = ptrace(PTRACE_SINGLESTEP, child, 0, 0);
      const uint64_t at = regs.rip;
      waitpid(child, &status, 0);
      ptrace(PTRACE_GETREGS, child, 0, &regs);
      siginfo_t si;
      ptrace(PTRACE_GETSIGINFO, child, 0, &si);
      printf("singlestep %ld over a syscall: stopped by signal %d (code %d), %s, %s\n", r,
             WSTOPSIG(status), si.si_code, regs.rip == at + 2 ? "past it" : "elsewhere",
             (pid_t)regs.rax == getpid() ? "it returned the debugger's pid" : "another result");
      ptrace(PTRACE_CONT, child, 0, 0);
      continue;
    }
    if (WSTOPSIG(status) != SIGTRAP || regs.rip != bp + 1) {
      printf("unexpected stop: signal %d\n", WSTOPSIG(status));
      ptrace(PTRACE_CONT, child, 0, WSTOPSIG(status));
      continue;
    }
    ++hits;
    printf("hit %d: target(%llu)\n", hits, (unsigned long long)regs.rdi);
    regs.rip = bp;
    ptrace(PTRACE_SETREGS, child, 0, &regs);
    mem_io(mem, 1, bp, &orig, 1, "take the int3 out");
    long r = ptrace(PTRACE_SINGLESTEP, child, 0, 0);
    waitpid(child, &status, 0);
    ptrace(PTRACE_GETREGS, child, 0, &regs);
    siginfo_t si;
    ptrace(PTRACE_GETSIGINFO, child, 0, &si);
    report_step(hits, r, status, si.si_code, regs.rip > bp && regs.rip < bp + 16);
    mem_io(mem, 1, bp, &int3, 1, "put the int3 back");
    ptrace(PTRACE_CONT, child, 0, 0);
  }
  printf("vfork events %d, vfork done %d, vfork child stops %d, SIGCHLD stops %d\n", vfork_events,
         vfork_done, new_task_stops, sigchld_stops);
  printf("debugger_calls done: %d hits\n", hits);
  return 0;
}
