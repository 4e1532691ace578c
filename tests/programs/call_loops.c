// Test program for where the recorder preempts (RecordSession::preempt): two threads spin in
// a loop that calls a short function at every pass, so that a preemption often lands within
// five bytes of a call instruction. No trampoline fits there (the jump it needs would move
// the call), and replay would find such a point only by stopping at every pass of its
// instruction; the recorder preempts a tick later instead, elsewhere.
// With "alarm", a 5 ms SIGALRM timer interrupts the loops too: the recorder delivers its
// signals where a trampoline fits (RecordSession::deliver_signal). With "branch", the loops
// call a second time at every other pass: a conditional jump stands right after the first
// call returns (where interrupts often land) and right before the second call, where no
// trampoline fits either, and where the task goes next is known only once it has jumped.
// Usage: call_loops [PASSES [alarm] [branch]]. Prints each thread's result, which depends
// only on PASSES and "branch", and with "alarm" how many signals arrived.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

unsigned long call_loop(unsigned long n, unsigned long seed);
unsigned long branch_loop(unsigned long n, unsigned long seed);

__asm__(
    ".text\n"
    ".globl call_loop\n"
    "call_loop:\n"  // what gcc -O1 makes of: for (i = 0; i < n; ++i) a = step(a, i);
    "  push %rbp\n"
    "  push %rbx\n"
    "  mov %rdi, %rbp\n"
    "  mov %rsi, %rdi\n"
    "  xor %ebx, %ebx\n"
    "1:\n"
    "  mov %rbx, %rsi\n"  // the jump from here would cover the call
    "  call step\n"       // nothing fits here but a hardware breakpoint
    "  mov %rax, %rdi\n"
    "  add $1, %rbx\n"
    "  cmp %rbp, %rbx\n"
    "  jne 1b\n"
    "  mov %rdi, %rax\n"
    "  pop %rbx\n"
    "  pop %rbp\n"
    "  ret\n"
    "step:\n"
    "  movabs $0x5851f42d4c957f2d, %rax\n"
    "  imul %rax, %rdi\n"
    "  lea (%rdi,%rsi,1), %rax\n"
    "  ret\n"
    "  ret\n"
    ".globl branch_loop\n"
    "branch_loop:\n"  // for (i = 0; i < n; ++i) { a = step(a, i); if (i & 1) a = step(a, i); }
    "  push %rbp\n"
    "  push %rbx\n"
    "  mov %rdi, %rbp\n"
    "  mov %rsi, %rdi\n"
    "  xor %ebx, %ebx\n"
    "2:\n"
    "  mov %rbx, %rsi\n"
    "  call parity_step\n"
    "  jz 3f\n"  // returned to (often where a signal arrives): the jump would cover the call
    "  call parity_step\n"
    "3:\n"
    "  add $1, %rbx\n"
    "  cmp %rbp, %rbx\n"
    "  jne 2b\n"
    "  mov %rdi, %rax\n"
    "  pop %rbx\n"
    "  pop %rbp\n"
    "  ret\n"
    "parity_step:\n"  // a = step(a, i) in %rdi, and ZF set where i is even
    "  movabs $0x5851f42d4c957f2d, %rax\n"
    "  imul %rax, %rdi\n"
    "  add %rsi, %rdi\n"
    "  test $1, %sil\n"
    "  ret\n");

static unsigned long passes;
static int branch;
static volatile sig_atomic_t alarms;

static void on_alarm(int sig) {
  (void)sig;
  ++alarms;
}

static void* run(void* seed) {
  if (branch) return (void*)branch_loop(passes, (unsigned long)seed);
  return (void*)call_loop(passes, (unsigned long)seed);
}

int main(int argc, char** argv) {
  passes = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000000;
  int alarm = 0;
  for (int i = 2; i < argc; ++i) {
    if (strcmp(argv[i], "alarm") == 0) {
      alarm = 1;
    } else if (strcmp(argv[i], "branch") == 0) {
      branch = 1;
    } else {
      fprintf(stderr, "call_loops: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (alarm) {
    signal(SIGALRM, on_alarm);
    struct itimerval every_5ms = {{0, 5000}, {0, 5000}};
    setitimer(ITIMER_REAL, &every_5ms, NULL);
  }
  pthread_t t[2];
  for (unsigned long k = 0; k < 2; ++k) pthread_create(&t[k], NULL, run, (void*)(k + 1));
  sigset_t alrm;  // the alarms go to the looping threads, not to this one waiting
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &alrm, NULL);
  for (int k = 0; k < 2; ++k) {
    void* r;
    pthread_join(t[k], &r);
    printf("thread %d: %lx\n", k, (unsigned long)r);
  }
  if (alarm) {
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("alarms: %d\n", (int)alarms);
  }
  return 0;
}
