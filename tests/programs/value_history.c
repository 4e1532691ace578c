// A program whose values change in known ways, printing each change, for the queries over
// a recording (rewind/history, rewind/calls, rewind/logAll, monitor history): a global
// written through a pointer in another function, a heap field, a stack local in two calls
// of the same function from the same call site (their frames share an address), and a
// recursive function that prints each call's argument and result, calls of one function
// with no event between them, and objects wider than a debug register (a struct, a 2-D
// array, a stack array) whose writes print "NAME|PARTS|VALUES" as a history row names them.
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

struct account {
  int id;
  long balance;
};

int counter;  // written by bump(), and once with the value it holds already

static void bump(int* slot, int by) {
  *slot += by;  // bump writes counter
}

long accumulate(int n) {
  long sum = 0;
  for (int i = 1; i <= n; i++) {
    sum += i * i;  // sum changes
    printf("sum %d %ld\n", n, sum);
  }
  return sum;  // accumulate returns
}

/// 0 + 1 + ... + n, recursively.
int depth_sum(int n) {
  int r = n <= 0 ? 0 : n + depth_sum(n - 1);
  printf("depth_sum %d %d\n", n, r);
  return r;
}

/// n times 6, in steps: its local v takes n, 2n, 6n. main calls it in a loop that makes no
/// syscall, so that its calls lie in one interval between events.
int scaled(int n) {
  int v = n;
  v *= 2;
  v *= 3;  // v grows
  return v;
}

struct point {
  int x, y;
};

/// 24 bytes: a nested struct, a short, bitfields and a long.
struct shape {
  struct point pos;
  short kind;
  unsigned visible : 1;
  unsigned layer : 3;
  long area;
};

struct shape shape;  // its history names the members each write changed
int grid[3][4];      // and the elements

/// Moves the shape and fills the grid, printing each change.
static void reshape(void) {
  for (int step = 1; step <= 3; step++) {
    shape.pos.x += step;  // the shape moves
    printf("shape|.pos.x|%d\n", shape.pos.x);
    shape.layer = (unsigned)step;  // a bitfield
    printf("shape|.layer|%d\n", step);
    grid[step - 1][step] = step * 11;  // a grid cell
    printf("grid|[%d][%d]|%d\n", step - 1, step, step * 11);
  }
  struct point to = {40, 50};
  shape.pos = to;  // both members in one 8-byte write
  printf("shape|.pos.x, .pos.y|%d, %d\n", to.x, to.y);
  shape.kind = 3;
  printf("shape|.kind|%d\n", shape.kind);
  shape.area = 1200;
  printf("shape|.area|%ld\n", shape.area);
}

static int square(int i) {
  return i * i;
}

/// i * i + 1, by calls (their frames are written below the caller's, on its stack page).
static int spread(int i) {
  return square(i) + 1;
}

/// A stack array written between calls (its page, the stack's, is written all the time).
static int slide(void) {
  int window[6] = {0};
  int total = 0;
  for (int i = 0; i < 6; i += 2) {
    window[i] = spread(i);  // window fills
    printf("window|[%d]|%d\n", i, window[i]);
  }
  for (int i = 0; i < 6; i++) total += window[i];
  return total;  // slide returns
}

int main(void) {
  struct account* acct = calloc(1, sizeof *acct);
  if (!acct) return 1;
  acct->id = 7;
  for (int i = 0; i < 12; i++) {
    bump(&counter, i % 3 == 0 ? 2 : 1);
    printf("counter %d\n", counter);
    if (i % 4 == 0) counter = counter * 1;  // the same value again: not a change
    acct->balance += counter * 10;          // balance changes
    printf("balance %ld\n", acct->balance);
  }
  long a = accumulate(5);
  // A recorded event between the two calls, made without a call (which would overwrite the
  // stack slot both calls' `sum` use): a raw getppid, traced as every syscall of the program.
  long ppid;
  __asm__ volatile("syscall" : "=a"(ppid) : "a"((long)SYS_getppid) : "rcx", "r11", "memory");
  long b = accumulate(3);
  printf("done %ld %ld\n", a, b);
  depth_sum(4);
  int scaled_total = 0;
  for (int k = 1; k <= 3; k++) scaled_total += scaled(k);
  printf("scaled %d\n", scaled_total);
  reshape();
  printf("slide %d\n", slide());
  free(acct);
  return 0;
}
