// The stack-building benchmark's program: 18 nested calls with arguments and locals (with
// main and stop_here, 20 frames with debug info), stopped in stop_here().
#include <stdio.h>

struct pair {
  int a;
  double b;
};

volatile int sink;

__attribute__((noinline)) void stop_here(int depth) { sink = depth; }

__attribute__((noinline)) int descend(int depth, const char* label) {
  struct pair p = {depth, depth * 0.5};
  int values[4] = {depth, depth + 1, depth + 2, depth + 3};
  if (depth == 0) {
    stop_here(depth);
    return p.a;
  }
  int r = descend(depth - 1, label);
  sink = values[r & 3];
  return r + p.a;
}

int main(void) {
  printf("%d\n", descend(17, "deep"));
  return 0;
}
