// Test program for finding points between events (engine/replay/reach_point.cpp): two threads
// spin without syscalls, so that recording preempts them inside their loops.
// - spin_plain: a loop whose bytes no other code jumps into; replay finds its points with the
//   register-compare trampoline. A chain of multiplications makes each pass slow (about
//   25 cycles), so that replay with a stop at every pass (REWIND_POINT_SEARCH) stays short.
// - jumpy_loop (jumpy_loop.S): a loop of 2-byte instructions with a jump to every other one,
//   so that the 5-byte jump of a trampoline at most of its instructions covers a jump target:
//   replay enters the patched bytes there and goes on at the moved copies.
// Usage: spin_loops [PLAIN_PASSES [JUMPY_PASSES]]. Prints both results, which depend only on
// the pass counts.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

unsigned long spin_plain(unsigned long n);
unsigned long jumpy_loop(unsigned long n);  // jumpy_loop.S

__asm__(
    ".text\n"
    ".globl spin_plain\n"
    "spin_plain:\n"
    "  xor %eax, %eax\n"
    "  mov $1, %ecx\n"
    "1:\n"
    "  add $1, %rax\n"
    "  imul $0x5bd1e995, %rcx, %rcx\n"
    "  imul $0x5bd1e995, %rcx, %rcx\n"
    "  imul $0x5bd1e995, %rcx, %rcx\n"
    "  imul $0x5bd1e995, %rcx, %rcx\n"
    "  imul $0x5bd1e995, %rcx, %rcx\n"
    "  imul $0x5bd1e995, %rcx, %rcx\n"
    "  imul $0x5bd1e995, %rcx, %rcx\n"
    "  imul $0x5bd1e995, %rcx, %rcx\n"
    "  add %rax, %rcx\n"
    "  cmp %rdi, %rax\n"
    "  jb 1b\n"
    "  mov %rcx, %rax\n"
    "  ret\n"
    "  ret\n");

static void* plain(void* arg) {
  return (void*)spin_plain((unsigned long)arg);
}

static void* jumpy(void* arg) {
  return (void*)jumpy_loop((unsigned long)arg);
}

int main(int argc, char** argv) {
  unsigned long n_plain = argc > 1 ? strtoul(argv[1], NULL, 0) : 5000000;
  unsigned long n_jumpy = argc > 2 ? strtoul(argv[2], NULL, 0) : 2000000;
  pthread_t a, b;
  void *ra, *rb;
  pthread_create(&a, NULL, plain, (void*)n_plain);
  pthread_create(&b, NULL, jumpy, (void*)n_jumpy);
  pthread_join(a, &ra);
  pthread_join(b, &rb);
  printf("plain %lu jumpy %lu\n", (unsigned long)ra, (unsigned long)rb);
  return 0;
}
