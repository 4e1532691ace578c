// A parent that debugs its child with the x86 debug registers, as gdb's hardware watchpoints
// do, for programs.sh (ptrace_watch): every answer and every stop the parent sees (DR6 as
// the kernel gives it before any stop too), one line each, then "ptrace_watch done". Natively and
// recorded the lines must be the same.
//   - Writes the kernel refuses: DR4 (EIO), a slot 8 bytes long at an odd address (EINVAL).
//   - Slot 0 watches `counter` for writes, slot 1 `flag` for reads and writes; DR7 reads back.
//   - The child writes `counter` 5 times in a loop (5 stops, each with DR6's slot 0 bit and
//     the value written), lets the kernel write it (a preadv(2) from a file: no stop
//     natively, the kernel's write), reads `flag` (a stop) and writes it (another).
//   - The parent turns the watchpoints off and the child's last write of `counter` stops no one.
// With "buffered-read" the file read is repeated 50 times (the preload library copies those
// results into `counter` when recorded: no stop either). With "execute" slot 0 is a hardware
// breakpoint on after_stop instead (gdb's hbreak), which the child reaches once.
#define _GNU_SOURCE
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "show_call.h"

volatile long counter;
volatile long flag;

static long dr_offset(int reg) {
  return (long)(offsetof(struct user, u_debugreg) + reg * sizeof(long));
}

// The child's first call after its stop, where "execute" puts a hardware breakpoint.
__attribute__((noinline)) static void after_stop(void) {
  asm volatile("" ::: "memory");
}

static void child_work(int reads) {
  ptrace(PTRACE_TRACEME, 0, 0, 0);
  raise(SIGSTOP);
  after_stop();
  for (long i = 1; i <= 5; ++i) counter = i * 10;
  FILE* f = tmpfile();
  if (!f) _exit(2);
  for (int i = 0; i < reads; ++i) {
    long v = 1000 + i;
    struct iovec into = {(void*)&counter, sizeof counter};
    if (pwrite(fileno(f), &v, sizeof v, 0) != sizeof v ||
        preadv(fileno(f), &into, 1, 0) != sizeof v)
      _exit(3);
  }
  long seen = flag;  // a read: slot 1 stops
  flag = seen + 7;   // a write: slot 1 stops
  raise(SIGSTOP);    // the parent turns the watchpoints off here
  counter = -1;
  _exit(counter == -1 ? 0 : 4);
}

// Prints the stop number `stop` of `child`: its signal and si_code, which slots DR6 says fired,
// and the watched variables as the child has them.
__attribute__((noinline)) static void report_hit(pid_t child, int stop, int status) {
  siginfo_t si;
  ptrace(PTRACE_GETSIGINFO, child, 0, &si);
  const unsigned long dr6 = (unsigned long)ptrace(PTRACE_PEEKUSER, child, dr_offset(6), 0);
  struct user_regs_struct regs;
  ptrace(PTRACE_GETREGS, child, 0, &regs);
  printf("stop %d: %s code %d, DR6 slots %lx (DR6 %lx), counter %ld, flag %ld, pc %s\n", stop,
         sigabbrev_np(WSTOPSIG(status)), si.si_code, dr6 & 0xf, dr6,
         ptrace(PTRACE_PEEKDATA, child, (void*)&counter, 0),
         ptrace(PTRACE_PEEKDATA, child, (void*)&flag, 0),
         regs.rip == (unsigned long)&after_stop ? "at after_stop" : "elsewhere");
  fflush(stdout);
}

int main(int argc, char** argv) {
  const int reads = argc > 1 && strcmp(argv[1], "buffered-read") == 0 ? 50 : 1;
  const int execute = argc > 1 && strcmp(argv[1], "execute") == 0;
  pid_t child = fork();
  if (child == 0) child_work(reads);
  int status;
  waitpid(child, &status, 0);
  printf("first stop: %s\n", WIFSTOPPED(status) ? sigabbrev_np(WSTOPSIG(status)) : "none");
  printf("DR6 before any stop: %lx\n", ptrace(PTRACE_PEEKUSER, child, dr_offset(6), 0));
  show("DR4", ptrace(PTRACE_POKEUSER, child, dr_offset(4), 0));
  show("DR2 odd address",
       ptrace(PTRACE_POKEUSER, child, dr_offset(2), (void*)((char*)&counter + 1)));
  // DR7: L2 on, 8 bytes (LEN 10b), write (R/W 01), at that odd address: refused.
  show("DR7 misaligned slot",
       ptrace(PTRACE_POKEUSER, child, dr_offset(7), (void*)(0x10ul | (0x9ul << 24))));
  if (execute) {
    // L0 on, slot 0 on execution (R/W 00, LEN 00): the child stops before after_stop runs,
    // and goes on from there (the kernel sets the resume flag).
    show("DR0", ptrace(PTRACE_POKEUSER, child, dr_offset(0), (void*)&after_stop));
    show("DR7 execute", ptrace(PTRACE_POKEUSER, child, dr_offset(7), (void*)0x1ul));
  } else {
    show("DR0", ptrace(PTRACE_POKEUSER, child, dr_offset(0), (void*)&counter));
    show("DR1", ptrace(PTRACE_POKEUSER, child, dr_offset(1), (void*)&flag));
    // L0 and L1 on; slot 0: write, 8 bytes (R/W 01, LEN 10b); slot 1: read/write, 8 bytes
    // (11, 10b).
    const unsigned long dr7 = 0x5ul | (0x9ul << 16) | (0xbul << 20);
    show("DR7", ptrace(PTRACE_POKEUSER, child, dr_offset(7), (void*)dr7));
    printf("DR7 reads back: %s\n",
           (unsigned long)ptrace(PTRACE_PEEKUSER, child, dr_offset(7), 0) == dr7 ? "yes" : "no");
  }
  for (int stops = 0;; ++stops) {
    ptrace(PTRACE_CONT, child, 0, 0);
    waitpid(child, &status, 0);
    if (!WIFSTOPPED(status)) break;
    if (WSTOPSIG(status) == SIGSTOP) {
      // Watchpoints off: DR7 cleared, as gdb removes them.
      printf("stopped by SIGSTOP, counter %ld\n",
             ptrace(PTRACE_PEEKDATA, child, (void*)&counter, 0));
      show("DR7 off", ptrace(PTRACE_POKEUSER, child, dr_offset(7), 0));
      continue;
    }
    report_hit(child, stops, status);
    ptrace(PTRACE_POKEUSER, child, dr_offset(6), 0);  // gdb clears the status after each hit
  }
  if (WIFEXITED(status)) printf("child exited %d\n", WEXITSTATUS(status));
  printf("ptrace_watch done\n");
  return 0;
}
