// Benchmark workload for issue 25's long traces (bench/long_traces): the single-threaded
// simulation loop of the issue, computing for about 10 s (first argument: passes, default
// 300,000,000) without a syscall. Every 2^24 passes it calls record_energy(), which writes
// S.ref_energy: the benchmark's breakpoint and watchpoint targets, far from any syscall.
// Built without optimisation, as programs being debugged are.
#include <stdio.h>
#include <stdlib.h>

struct body {
  double x, v;
};

struct state {
  struct body bodies[8];
  double ref_energy;
  long checks;
} S;

__attribute__((noinline)) void record_energy(long pass) {
  double e = 0;
  for (int i = 0; i < 8; ++i) e += S.bodies[i].x * S.bodies[i].x + S.bodies[i].v * S.bodies[i].v;
  S.ref_energy = e;
  S.checks = pass;
}

__attribute__((noinline)) static void advance(double dt) {
  for (int i = 0; i < 8; ++i) {
    S.bodies[i].v -= S.bodies[i].x * dt;
    S.bodies[i].x += S.bodies[i].v * dt;
  }
}

int main(int argc, char** argv) {
  long passes = argc > 1 ? atol(argv[1]) : 300000000L;
  for (int i = 0; i < 8; ++i) S.bodies[i].x = i + 1;
  for (long k = 0; k < passes; ++k) {
    advance(0.001);
    if ((k & ((1L << 24) - 1)) == 0) record_energy(k);
  }
  printf("%.6f %.6f\n", S.bodies[7].x, S.ref_energy);
  return 0;
}
