// Sample: a result that depends on the clock and on random numbers.
// Bug: when the nanosecond clock and the random draw line up, the "checksum" overflows a
// signed int (undefined behaviour) and the program reports FAIL — about one run in five.
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

static int checksum(const unsigned char* seed, int n, long nanos) {
  unsigned hash = 0;
  for (int i = 0; i < n; ++i) hash = hash * 31 + seed[i];
  int sum = (int)(hash % 1000000) + 1;
  if (nanos % 5 == 0) sum += 0x7fffffff;  // the bug: signed overflow on some runs
  return sum;
}

int main(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned char seed[8];
  if (getrandom(seed, sizeof seed, 0) != sizeof seed) return 2;
  srand((unsigned)(ts.tv_nsec ^ seed[0]));
  int draw = rand() % 100;
  int sum = checksum(seed, sizeof seed, ts.tv_nsec / 1000);
  printf("time %ld.%09ld draw %d checksum %d\n", (long)ts.tv_sec, ts.tv_nsec, draw, sum);
  if (sum < 0) {
    printf("FAIL: negative checksum\n");
    return 1;
  }
  printf("ok\n");
  return 0;
}
