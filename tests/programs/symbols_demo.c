// A program with one of each thing a debugger must show: recursion, a libc callback (qsort),
// ints, doubles, a struct with a nested array, a linked list, an enum, a local in an inner
// block, globals. Each interesting moment calls stop_here(), where the tests stop.
#include <stdio.h>
#include <stdlib.h>

enum color { RED, GREEN = 5, BLUE, INFRARED = 200 };  // 200: one unsigned DWARF byte
struct point {
  int x, y;
};
struct shape {
  char name[16];
  struct point corners[3];
  double area;
  enum color color;
  unsigned flags : 3;
  unsigned visible : 1;
};
struct node {
  int value;
  struct node* next;
};

volatile int sink;
volatile int seed = 7;
int global_counter = 42;
static double global_ratio = 0.25;
const char* greeting = "hello";
int grid[2][3] = {{1, 2, 3}, {4, 5, 6}};

__attribute__((noinline)) void stop_here(int tag) { sink = tag; }

__attribute__((noinline)) int recurse(int n) {
  if (n == 0) {
    stop_here(100);
    return 0;
  }
  int r = recurse(n - 1);
  sink = r;  // keeps the call from being a tail call
  return r + n;
}

static int compare_ints(const void* a, const void* b) {
  static int calls;
  int x = *(const int*)a, y = *(const int*)b;
  if (calls++ == 0) stop_here(200);
  return (x > y) - (x < y);
}

__attribute__((noinline)) int loop_sum(int n) {
  int total = 0;
  for (int i = 0; i < n; i++) {
    total += i;
    sink = total;
  }
  return total;
}

// At -O2 its double argument lives in xmm0: a value read from the SSE registers.
__attribute__((noinline)) double scaled(double ratio, int factor) {
  double r = ratio * factor;
  sink = (int)r;
  return r;
}

int main(int argc, char** argv) {
  int count = 7;
  double ratio = 2.5;
  struct shape tri = {"triangle", {{0, 0}, {4, 0}, {0, 3}}, 6.0, BLUE, 5, 1};
  struct node n3 = {3, NULL}, n2 = {2, &n3}, n1 = {1, &n2};
  struct node* list = &n1;
  enum color c = GREEN;
  int values[] = {5, 9, 1, 3};
  int temp = seed * 3;  // dead after the next line: optimized out at -O2 by stop_here
  sink = temp;
  {
    int inner = count * 6;
    stop_here(inner);
  }
  recurse(4);
  qsort(values, 4, sizeof values[0], compare_ints);
  int sum = loop_sum(3);
  ratio = scaled(ratio, count);
  printf("%s %d %g %s %d %d %d %d\n", tri.name, count, ratio + global_ratio, greeting,
         list->next->value, c, values[0], sum + argc + (argv[0] != NULL) + global_counter);
  return 0;
}
