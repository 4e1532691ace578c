// A stripped program (only the dynamic symbol table, as Debian ships its interpreters) whose
// compiler split one function and kept another one unnamed: loop()'s block that calls the cold
// rare_event() goes to a part of its own (loop.cold before stripping), and display() calls the
// static report(), which no symbol names once stripped. For the tests of function_parts.h.
// Built -O2 -rdynamic and stripped (tests/CMakeLists.txt).
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int report(int x) {
  printf("report %d\n", x);
  return x * 2;
}

int display(int x) {
  return report(x) + 1;
}

__attribute__((cold, noinline)) void rare_event(int i) {
  fprintf(stderr, "rare %d\n", i);
}

int loop(int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) {
    if (i % 1000 == 999) {  // calls a cold function: split off
      rare_event(i);
      sum -= i;
    }
    sum += i;
  }
  return sum;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2000;
  int sum = loop(n);  // first: the tests stop in it, then in display()'s callee
  printf("%d %d\n", sum, display(n));
  return 0;
}
