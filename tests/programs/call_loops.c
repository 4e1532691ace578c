// Test program for where the recorder preempts (RecordSession::preempt): two threads spin in
// a loop that calls a short function at every pass, so that a preemption often lands within
// five bytes of a call instruction. No trampoline fits there (the jump it needs would move
// the call), and replay would find such a point only by stopping at every pass of its
// instruction; the recorder preempts a tick later instead, elsewhere.
// Usage: call_loops [PASSES]. Prints each thread's result, which depends only on PASSES.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

unsigned long call_loop(unsigned long n, unsigned long seed);

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
    "  ret\n");

static unsigned long passes;

static void* run(void* seed) {
  return (void*)call_loop(passes, (unsigned long)seed);
}

int main(int argc, char** argv) {
  passes = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000000;
  pthread_t t[2];
  for (unsigned long k = 0; k < 2; ++k) pthread_create(&t[k], NULL, run, (void*)(k + 1));
  for (int k = 0; k < 2; ++k) {
    void* r;
    pthread_join(t[k], &r);
    printf("thread %d: %lx\n", k, (unsigned long)r);
  }
  return 0;
}
