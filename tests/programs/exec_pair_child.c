// The program exec_pair.c runs in its child: child_step is the same code as the parent's
// parent_step, at the same address (section .pair at 0x300000).
volatile int done;

__attribute__((noinline, section(".pair"))) void child_step(int i) {
  done += i;  // the child's own line
}

int main(void) {
  for (int i = 0; i < 3; ++i) child_step(i);
  return done == 3 ? 0 : 1;
}
