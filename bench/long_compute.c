// Benchmark workload for reverse steps far from any syscall (timeline_latency --far): a
// simulation step repeated with no syscall for several seconds (the first argument is the
// pass count), built without optimisation so that its loop state lives in memory and its
// registers repeat from one pass to the next, then one line of output.
#include <stdio.h>
#include <stdlib.h>

struct body {
  double x, v;
};

static struct body bodies[8];

__attribute__((noinline)) static void advance(double dt) {
  for (int i = 0; i < 8; ++i) {
    bodies[i].v -= bodies[i].x * dt;
    bodies[i].x += bodies[i].v * dt;
  }
}

int main(int argc, char** argv) {
  long passes = argc > 1 ? atol(argv[1]) : 200000000L;
  for (int i = 0; i < 8; ++i) bodies[i].x = i + 1;
  for (long k = 0; k < passes; ++k) advance(0.001);
  printf("%.6f\n", bodies[7].x);
  return 0;
}
