// Test program for syscall numbers the kernel does not implement: negative ones, numbers past
// the table, rr's private numbers and rewind's own (1000-1003, which only rewind's preload
// library may use). Natively each fails with ENOSYS; recorded and replayed it must too.
// Prints each result; exits 1 if any call did not fail with ENOSYS.
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  const long numbers[] = {-1, -100, 1000, 1001, 1002, 1003, 1010, 4096, 100000};
  int wrong = 0;
  for (unsigned i = 0; i < sizeof numbers / sizeof numbers[0]; ++i) {
    errno = 0;
    long r = syscall(numbers[i], 1000000, 2, 3, 4, 5, 6);
    printf("syscall(%ld) = %ld, errno %d\n", numbers[i], r, errno);
    wrong |= r != -1 || errno != ENOSYS;
  }
  printf(wrong ? "some call did not fail with ENOSYS\n" : "every call failed with ENOSYS\n");
  return wrong;
}
