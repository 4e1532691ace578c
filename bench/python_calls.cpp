// Benchmark: issue 28's calls of a Python function over a whole recording (rewind/calls,
// HitQuery), with each call's argument and return value. bench/py_calls.py calls step(i)
// CALLS times under PYTHON; on its recording this times:
//  - a plain replay of the whole trace on a new timeline (what every query pays at least);
//  - the calls of py_calls.step over the whole recording, checked to be CALLS calls in order,
//    the k-th with i = k and the return value 3k+1 (what the script computes).
// "wrong" counts runs whose answer differed. The figure per call (the query's time over the
// plain replay, divided by the calls) is what grows with the number of hits.
// Usage: python_calls [--runs N] [--calls N] [--python PATH]. Prints medians in milliseconds.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/bench_stats.h"
#include "engine/debugger/hit_history.h"

using namespace rwd;
using bench::median;
using bench::print_row;
using bench::Samples;

namespace {

/// Whether `h` holds the calls py_calls.py makes: `calls` of them, the k-th with i = k,
/// returning 3k+1. Prints the first difference.
bool right_calls(const HitHistory& h, long calls) {
  if (!h.complete || long(h.hits.size()) != calls) {
    fprintf(stderr, "python_calls: %zu calls found (complete: %d), %ld made\n", h.hits.size(),
            int(h.complete), calls);
    return false;
  }
  for (long k = 0; k < calls; ++k) {
    const RecordedHit& c = h.hits[size_t(k)];
    bool arg = c.arguments.size() == 1 && c.arguments[0].first == "i" &&
               c.arguments[0].second == std::to_string(k);
    bool ret = c.return_known && c.returned && c.return_value == std::to_string(3 * k + 1);
    if (!arg || !ret) {
      fprintf(stderr, "python_calls: call %ld: argument %s, return %s (known %d)\n", k,
              c.arguments.empty() ? "none" : c.arguments[0].second.c_str(), c.return_value.c_str(),
              int(c.return_known));
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 3;
  long calls = 1'000;
  std::string python = "/usr/bin/python3";
  for (int i = 1; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--runs"))
      runs = std::max(1, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--calls"))
      calls = std::max(1L, atol(argv[++i]));
    else if (!strcmp(argv[i], "--python"))
      python = argv[++i];
  }
  bench::RecordedCommand rec(REWIND_BIN, "py_calls",
                             python + " " + PY_CALLS + " " + std::to_string(calls));
  if (!rec.ok) return 1;
  printf("bench/py_calls.py (%ld calls of step) under %s: native %.0f ms, record %.0f ms\n", calls,
         python.c_str(), rec.native_ms, rec.record_ms);
  bench::print_header();
  bench::Failures failures{"python_calls"};
  auto guarded = [&](auto op) { return failures.guarded(op); };
  Samples plain = bench::plain_replays(rec.trace, runs, failures), query;
  print_row("replay of the whole trace (new timeline)", plain);
  double reference = median(plain.ms);
  for (int i = 0; i < runs; ++i)
    query.time(guarded([&] {
      HitQuery q(rec.trace);
      HitRequest req;
      req.function = "py_calls.step";
      return right_calls(q.run(req), calls);
    }));
  print_row("calls of py_calls.step with results, whole recording", query, reference);
  printf("(%.2f ms per call over the plain replay)\n",
         (median(query.ms) - reference) / double(calls));
  return failures.count + plain.wrong + query.wrong ? 1 : 0;
}
