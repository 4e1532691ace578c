// Benchmark: issue 27's targets for Python line breakpoints, through the engine's Debugger
// (what DAP calls). bench/py_loop.py runs a loop of 100,000 passes under /usr/bin/python3;
// on its recording this times:
//  - a plain replay from the start to the end (no breakpoint), the reference;
//  - the same replay with a breakpoint on a line that never runs (target: at most 3 times the
//    plain replay);
//  - from the end, reverseContinue to the loop line's last pass (target: 2 s median);
//  - from there, reverseContinue to the pass before, four times (each from the pass the one
//    before reached: the timeline's reverse continue from a hit);
//  - continue from one pass to the next (target: 100 ms median).
// Each timed operation is checked (the pass it lands on, by the frame's local i); "wrong"
// counts those that landed elsewhere.
// A run that throws is reported on stderr and counted; the exit status is non-zero then.
// Usage: python_breakpoints [--runs N] [--python PATH]. Prints medians in milliseconds.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_stats.h"
#include "bench/script_lines.h"
#include "engine/debugger/debugger.h"
#include "engine/debugger/timeline_target.h"
#include "engine/interp/python/python_frames.h"

using namespace rwd;
using bench::line_of;
using bench::line_spec;
using bench::median;
using bench::print_row;
using bench::Samples;

namespace {

constexpr int kPasses = 100'000;

/// The innermost Python frame's local `name` on task `tid`, "" when there is none.
std::string python_local(Debugger& d, pid_t tid, const std::string& name) {
  InterpMemory mem(d.target(tid));
  auto py = PythonReader::find(d.modules(), mem);
  if (!py) return "";
  std::vector<InterpFrame> st = py->stack(mem, tid);
  if (st.empty()) return "";
  for (const InterpVariable& v : st[0].locals)
    if (v.name == name) return v.value;
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::string python = "/usr/bin/python3";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::max(1, atoi(argv[++i]));
    if (!strcmp(argv[i], "--python") && i + 1 < argc) python = argv[++i];
  }
  bench::RecordedCommand rec(REWIND_BIN, "pybp",
                             python + " " + PY_LOOP + " " + std::to_string(kPasses));
  if (!rec.ok) return 1;
  const int loop = line_of(PY_LOOP, "# loop line");
  const int never = line_of(PY_LOOP, "# never reached");
  printf("bench/py_loop.py (%d passes) under %s: native %.0f ms, record %.0f ms\n", kPasses,
         python.c_str(), rec.native_ms, rec.record_ms);
  printf("| operation | median ms | worst ms | runs | vs plain replay | wrong |\n");
  printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");

  Samples plain, unreached, back, back_pass, next;
  int failed = 0;
  for (int r = 0; r < runs; ++r) try {
      {
        Timeline tl(rec.trace);
        Debugger d(tl);
        plain.time([&] { return bench::runs_to_end(d); });
      }
      {
        Timeline tl(rec.trace);
        Debugger d(tl);
        d.set_source_breakpoints(PY_LOOP, {line_spec(never)});
        unreached.time([&] { return bench::runs_to_end(d); });
        // From the end: back to the loop line's last pass, then on from pass to pass.
        d.set_source_breakpoints(PY_LOOP, {line_spec(loop)});
        DebugStop hit;
        back.time([&] {
          hit = d.resume(Direction::Backward);
          return !hit.breakpoint_ids.empty() &&
                 python_local(d, hit.stop.tid, "i") == std::to_string(kPasses - 1);
        });
        // Back 4 more passes, then forwards one pass at a time.
        for (int k = 0; k < 4; ++k) {
          std::string want = std::to_string(kPasses - 2 - k);
          back_pass.time([&] {
            hit = d.resume(Direction::Backward);
            return !hit.breakpoint_ids.empty() && python_local(d, hit.stop.tid, "i") == want;
          });
        }
        for (int k = 0; k < 3; ++k) {
          std::string want = std::to_string(kPasses - 4 + k);
          next.time([&] {
            hit = d.resume(Direction::Forward);
            return !hit.breakpoint_ids.empty() && python_local(d, hit.stop.tid, "i") == want;
          });
        }
      }
    } catch (const std::exception& e) {  // a run that failed is counted and reported, not fatal
      fprintf(stderr, "run %d failed: %s\n", r + 1, e.what());
      ++failed;
    }
  double ref = median(plain.ms);
  print_row("plain replay, start to end", plain);
  print_row("replay with a breakpoint on a line never run", unreached, ref);
  print_row("reverseContinue from the end to the loop's last pass", back);
  print_row("reverseContinue from a pass to the one before", back_pass);
  print_row("continue to the next pass", next);
  if (failed) printf("%d of %d runs failed (errors above)\n", failed, runs);
  return failed + plain.wrong + unreached.wrong + back.wrong + back_pass.wrong + next.wrong ? 1 : 0;
}
