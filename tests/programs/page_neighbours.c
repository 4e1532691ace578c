// Test program for write watches beside hot stores: a loop with no syscall (its argument is
// the pass count; 4096 by default) that stores pass i into neighbours of `page.watched`, on
// its page, with a `mov` of every form (8-, 16-, 32- and 64-bit registers, ah, an imm8 and a
// sign-extended imm32), and writes page.watched = i every 1024 passes. A watch on
// page.watched, kept in software (engine/replay/soft_watch_run.h), makes every one of those
// stores fault; their values at each hit show whether they were made as the CPU makes them.
#include <stdio.h>
#include <stdlib.h>

struct neighbours {
  long before[8];
  volatile long watched;
  unsigned char b;   // i's low byte (a byte register)
  unsigned char hi;  // i's second byte (from %ah)
  unsigned char imm8;
  unsigned short w;
  unsigned int d;
  long q;
  long neg;  // -5 (an imm32 the store sign-extends)
} __attribute__((aligned(4096)));

struct neighbours page;

int main(int argc, char** argv) {
  long passes = argc > 1 ? atol(argv[1]) : 4096;
  for (long i = 1; i <= passes; ++i) {
    __asm__ volatile(
        "movb %b[i], %[b]\n\t"
        "movw %w[i], %[w]\n\t"
        "movl %k[i], %[d]\n\t"
        "movq %[i], %[q]\n\t"
        "movq $-5, %[neg]\n\t"
        "movb $0x5a, %[imm8]\n\t"
        "movb %%ah, %[hi]\n\t"
        : [b] "=m"(page.b), [w] "=m"(page.w), [d] "=m"(page.d), [q] "=m"(page.q),
          [neg] "=m"(page.neg), [imm8] "=m"(page.imm8), [hi] "=m"(page.hi)
        : [i] "a"(i));
    if ((i & 1023) == 0) page.watched = i;
  }
  printf("%ld %u %u %u %ld %ld\n", page.watched, page.b, page.hi, page.d, page.q, page.neg);
  return 0;
}
