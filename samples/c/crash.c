// Sample: a crash that happens only sometimes. A random index picks a slot in a table of
// pointers; one slot was never filled, and dereferencing it raises SIGSEGV.
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

struct item {
  const char* name;
  int value;
};

static struct item apples = {"apples", 3}, pears = {"pears", 5}, plums = {"plums", 7};
static struct item* table[4] = {&apples, &pears, &plums, NULL};  // the bug: slot 3 is empty

int main(void) {
  unsigned char r;
  getrandom(&r, 1, 0);
  int total = 0;
  for (int i = 0; i < 3; ++i) {
    struct item* it = table[i];
    printf("%s\n", it->name);
    total += it->value;
  }
  struct item* pick = table[r % 4];
  fflush(stdout);
  printf("picked %s\n", pick->name);  // crashes when the empty slot is drawn
  printf("total %d\n", total + pick->value);
  return 0;
}
