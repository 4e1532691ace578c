// One call's result as a test program prints it, for programs.sh to compare with a native run.
#pragma once
#include <errno.h>
#include <stdio.h>
#include <string.h>

// Prints "WHAT: R", or "WHAT: -1 ENAME" with errno's name when the call failed (R is -1).
static inline void show(const char* what, long r) {
  if (r == -1)
    printf("%s: -1 %s\n", what, strerrorname_np(errno));
  else
    printf("%s: %ld\n", what, r);
  fflush(stdout);
}
