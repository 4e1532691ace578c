// The program of the source-path tests (dap_tests [paths], the gdb test): built out of source
// and by build systems, then debugged with a breakpoint on the line that adds to total.
#include <stdio.h>
static int total;
void add(int v) {
  total += v;
}
int main(void) {
  for (int i = 0; i < 3; i++) add(i);
  printf("%d\n", total);
  return 0;
}
