// A program whose values change in known ways, printing each change, for the queries over
// a recording (rewind/history, rewind/calls, rewind/logAll, monitor history): a global
// written through a pointer in another function, a heap field, a stack local in two calls
// of the same function from the same call site (their frames share an address), and a
// recursive function that prints each call's argument and result.
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
  free(acct);
  return 0;
}
