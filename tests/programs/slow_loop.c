// Test program for pausing a replay: many cheap syscalls (each one a recorded event when
// recorded with --no-syscall-buffer), so that replaying it takes a few seconds, then one line
// of output.
#include <stdio.h>
#include <unistd.h>

int main(void) {
  long sum = 0;
  for (int i = 0; i < 60000; ++i) sum += getppid() > 0;
  printf("done %ld\n", sum);
  return 0;
}
