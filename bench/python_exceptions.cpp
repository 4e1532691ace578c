// Benchmark: what Python exception stops (engine/debugger/python_exceptions.h) cost, through
// the engine's Debugger (what DAP calls). bench/py_raise.py raises and catches 100,000
// ValueErrors under /usr/bin/python3, then one KeyError; on its recording this times:
//  - a plain replay from the start to the end (no filter), the reference;
//  - the same with "python-uncaught" (VS Code's default): every exception is caught, so it
//    never stops, but each raise and each frame it leaves is a breakpoint hit;
//  - the same with "python-raised" limited to a type never raised (each raise is read);
//  - from the end, reverseContinue with "python-raised" to the last raise (the KeyError), then
//    to the ValueError before it.
// Each timed operation is checked (where it stopped: the type of the exception); "wrong"
// counts those that did not. A run that throws is reported and counted.
// Usage: python_exceptions [--runs N] [--raises N] [--python PATH]. Prints medians in
// milliseconds.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_stats.h"
#include "engine/debugger/debugger.h"

using namespace rwd;
using bench::median;
using bench::print_row;
using bench::Samples;

namespace {

/// Whether `d` is the end of the recording, not an exception stop.
bool ends(const DebugStop& d) {
  return d.stop.reason == StopReason::TraceEnd && !d.exception;
}

/// Whether `d` is a stop at an exception of type `type`.
bool raised(const DebugStop& d, const char* type) {
  return d.exception && d.exception->type == type;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  int raises = 10'000;
  std::string python = "/usr/bin/python3";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::max(1, atoi(argv[++i]));
    if (!strcmp(argv[i], "--python") && i + 1 < argc) python = argv[++i];
    if (!strcmp(argv[i], "--raises") && i + 1 < argc) raises = std::max(1, atoi(argv[++i]));
  }
  bench::RecordedCommand rec(REWIND_BIN, "pyexc",
                             python + " " + PY_RAISE + " " + std::to_string(raises));
  if (!rec.ok) return 1;
  printf(
      "bench/py_raise.py (%d exceptions raised and caught) under %s: native %.0f ms, record "
      "%.0f ms\n",
      raises, python.c_str(), rec.native_ms, rec.record_ms);
  printf("| operation | median ms | worst ms | runs | vs plain replay | wrong |\n");
  printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");

  Samples plain, uncaught, filtered, back, back_again;
  int failed = 0;
  for (int r = 0; r < runs; ++r) try {
      {
        Timeline tl(rec.trace);
        Debugger d(tl);
        plain.time([&] { return ends(d.resume(Direction::Forward)); });
      }
      {
        Timeline tl(rec.trace);
        Debugger d(tl);
        PythonExceptionStops stops;
        stops.uncaught = true;
        d.set_python_exception_stops(stops);
        uncaught.time([&] { return ends(d.resume(Direction::Forward)); });
      }
      {
        Timeline tl(rec.trace);
        Debugger d(tl);
        PythonExceptionStops never;
        never.raised = true;
        never.types = {"OverflowError"};
        d.set_python_exception_stops(never);
        filtered.time([&] { return ends(d.resume(Direction::Forward)); });
        PythonExceptionStops any;
        any.raised = true;
        d.set_python_exception_stops(any);
        back.time([&] { return raised(d.resume(Direction::Backward), "KeyError"); });
        back_again.time([&] { return raised(d.resume(Direction::Backward), "ValueError"); });
      }
    } catch (const std::exception& e) {
      fprintf(stderr, "run %d failed: %s\n", r + 1, e.what());
      ++failed;
    }
  double ref = median(plain.ms);
  print_row("plain replay, start to end", plain);
  print_row("replay with python-uncaught (nothing uncaught)", uncaught, ref);
  print_row("replay with python-raised for a type never raised", filtered, ref);
  print_row("reverseContinue from the end to the last raise", back);
  print_row("reverseContinue to the raise before it", back_again);
  if (failed) printf("%d of %d runs failed (errors above)\n", failed, runs);
  return failed + plain.wrong + uncaught.wrong + filtered.wrong + back.wrong + back_again.wrong ? 1
                                                                                                : 0;
}
