/* A program that reads and restores its own rflags (pushf, popf), as code that saves flags
 * around a critical section does: a debugger's single steps over these instructions must leave
 * the step's trap flag neither in its memory nor in its registers (step_flags.h). Each round
 * keeps the flags it read; a round that saw TF makes a traced syscall the recording never made,
 * so a replay that leaked TF diverges. Prints how many rounds saw TF (0 natively). */
#include <stdio.h>
#include <unistd.h>

#define ROUNDS 16

volatile unsigned long seen[ROUNDS];

__attribute__((noinline)) void flags_probe(int round) {
  unsigned long flags;
  __asm__ volatile("pushfq\n\tpopq %0" : "=r"(flags));
  seen[round] = flags;
  __asm__ volatile("pushfq\n\tpopfq" ::: "cc", "memory");
}

int main(void) {
  int with_tf = 0;
  for (int round = 0; round < ROUNDS; ++round) {
    flags_probe(round);
    if (seen[round] & 0x100) {
      with_tf++;
      getsid(0);
    }
  }
  printf("rounds that saw the trap flag: %d\n", with_tf);
  return 0;
}
