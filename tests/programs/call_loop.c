// A loop whose body's second line starts where a call returns: at -O0 the first instruction
// of the line that adds to total is the return address of the call to note(), so a breakpoint
// there is reached by a `ret`, straight from note(). For the debugger tests of breakpoints
// met that way.
#include <stdio.h>

volatile int sink;

__attribute__((noinline)) void note(int i) {
  sink = i;
}

int main(void) {
  int total = 0;
  for (int i = 0; i < 3; ++i) {
    note(i);
    total += i;  // the return address of note()
  }
  printf("%d\n", total);
  return 0;
}
