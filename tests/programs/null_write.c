// Test program: writes through a null pointer after a few steps, so it always dies of SIGSEGV
// at the same instruction (the gdb test stops there, then goes back).
#include <stdio.h>

struct node {
  int value;
  struct node* next;
};

__attribute__((noinline)) int sum(struct node* n) {
  int s = 0;
  for (; n; n = n->next) s += n->value;
  return s;
}

__attribute__((noinline)) void poison(struct node* n) {
  n->next->value = 42;
}

int main(void) {
  struct node c = {3, NULL}, b = {2, &c}, a = {1, &b};
  printf("sum %d\n", sum(&a));
  fflush(stdout);
  poison(&c);  // c.next is NULL
  return 0;
}
