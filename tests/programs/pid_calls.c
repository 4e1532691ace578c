// Test program for breakpoints on a syscall wrapper that librewind_preload.so rewrites when
// the program starts: calls getpid() three times (glibc's `mov $39, %eax; syscall; ret`, a
// buffered syscall's site) and prints how many calls answered.
#include <stdio.h>
#include <unistd.h>

int main(void) {
  int answered = 0;
  for (int i = 0; i < 3; ++i) answered += getpid() > 0;
  printf("getpid answered %d times\n", answered);
  return 0;
}
