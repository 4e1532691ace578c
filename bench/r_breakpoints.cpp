// Benchmark: R line and function breakpoints (engine/debugger/r_breakpoints.h) through the
// engine's Debugger (what DAP calls). bench/r_loop.R calls tally() once per pass of a
// top-level loop, under Debian's R with the JIT off (AST closures) and at level 3
// (byte-compiled closures). On each recording this times:
//  - a plain replay from the start to the end (no breakpoint), the reference;
//  - the same replay with a breakpoint on a line of never(), defined but never called;
//  - from the start, continue to the first pass with a breakpoint on tally()'s first line,
//    set before R runs (pending until R sources the file);
//  - from the end, reverseContinue to tally()'s last pass;
//  - reverseContinue from that pass to the one before, 4 times, then continue from one pass
//    to the next;
//  - the same two with a function breakpoint on `tally` instead of the line.
// Each timed operation is checked (the pass it lands on, by the frame's argument i);
// "wrong" counts those that landed elsewhere. A run that throws is reported on stderr and
// counted; the exit status is non-zero then.
// Usage: r_breakpoints [--runs N] [--passes N] [--jit 0|3]. Prints medians in milliseconds.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_stats.h"
#include "bench/script_lines.h"
#include "engine/debugger/debugger.h"
#include "engine/interp/r/r_frames.h"

using namespace rwd;
using bench::line_of;
using bench::line_spec;
using bench::median;
using bench::print_row;
using bench::Samples;

namespace {

/// The innermost R frame's local `name` on task `tid` ("" when there is none), and its
/// function's name in `function`.
std::string r_local(Debugger& d, pid_t tid, const std::string& name,
                    std::string* function = nullptr) {
  InterpMemory mem(d.target(tid));
  std::optional<RReader> r = RReader::find(d.modules(), mem);
  if (!r) return "";
  std::vector<InterpFrame> st = r->stack(mem);
  if (st.empty()) return "";
  if (function) *function = st[0].function;
  for (const InterpVariable& v : st[0].locals)
    if (v.name == name) return v.value;
  return "";
}

/// Whether `hit` stopped at a breakpoint in tally() with i == `pass` (R shows it as "NL").
bool at_pass(Debugger& d, const DebugStop& hit, int pass) {
  std::string function;
  std::string i = hit.breakpoint_ids.empty() ? "" : r_local(d, hit.stop.tid, "i", &function);
  bool right = i == std::to_string(pass) + "L" && function == "tally";
  if (!right)
    fprintf(stderr, "wrong landing: want tally() with i = %d, got %s with i = %s (%zu ids)\n", pass,
            function.c_str(), i.c_str(), hit.breakpoint_ids.size());
  return right;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5, passes = 1000;
  std::string jit = "3";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::max(1, atoi(argv[++i]));
    if (!strcmp(argv[i], "--passes") && i + 1 < argc) passes = std::max(6, atoi(argv[++i]));
    if (!strcmp(argv[i], "--jit") && i + 1 < argc) jit = argv[++i];
  }
  setenv("R_HOME", "/usr/lib/R", 1);
  setenv("R_ENABLE_JIT", jit.c_str(), 1);
  bench::RecordedCommand rec(REWIND_BIN, "rbp",
                             std::string("/usr/lib/R/bin/exec/R --no-echo --no-restore -e "
                                         "'options(keep.source = TRUE); source(\"") +
                                 R_LOOP + "\")' --args " + std::to_string(passes));
  if (!rec.ok) return 1;
  const int body = line_of(R_LOOP, "# loop body");
  const int never = line_of(R_LOOP, "# never reached");
  printf(
      "bench/r_loop.R (%d passes) under R with R_ENABLE_JIT=%s: native %.0f ms, record "
      "%.0f ms\n",
      passes, jit.c_str(), rec.native_ms, rec.record_ms);
  printf("| operation | median ms | worst ms | runs | vs plain replay | wrong |\n");
  printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");

  Samples plain, unreached, first, back, prev, next, fn_back, fn_prev, fn_next;
  int failed = 0;
  // From where `d` is (after the last pass): back to the last pass, 4 more back one pass at
  // a time, then forwards one pass at a time.
  auto back_and_forth = [&](Debugger& d, Samples& b, Samples& p, Samples& n) {
    DebugStop hit;
    b.time([&] {
      hit = d.resume(Direction::Backward);
      return at_pass(d, hit, passes);
    });
    for (int k = 0; k < 4; ++k)
      p.time([&] {
        hit = d.resume(Direction::Backward);
        return at_pass(d, hit, passes - 1 - k);
      });
    for (int k = 0; k < 3; ++k)
      n.time([&] {
        hit = d.resume(Direction::Forward);
        return at_pass(d, hit, passes - 3 + k);
      });
  };
  for (int r = 0; r < runs; ++r) try {
      {
        Timeline tl(rec.trace);
        Debugger d(tl);
        plain.time([&] { return bench::runs_to_end(d); });
      }
      {
        Timeline tl(rec.trace);
        Debugger d(tl);
        d.set_source_breakpoints(R_LOOP, {line_spec(never)});
        unreached.time([&] { return bench::runs_to_end(d); });
        d.set_source_breakpoints(R_LOOP, {line_spec(body)});
        back_and_forth(d, back, prev, next);
      }
      {
        Timeline tl(rec.trace);
        Debugger d(tl);
        d.set_source_breakpoints(R_LOOP, {line_spec(body)});
        first.time([&] { return at_pass(d, d.resume(Direction::Forward), 1); });
        d.set_source_breakpoints(R_LOOP, {});
        if (d.resume(Direction::Forward).stop.reason != StopReason::TraceEnd)
          throw std::runtime_error("no end of the recording after removing the breakpoint");
        BreakpointSpec fn;
        fn.function = "tally";
        d.set_function_breakpoints({fn});
        back_and_forth(d, fn_back, fn_prev, fn_next);
      }
    } catch (const std::exception& e) {  // a run that failed is counted and reported, not fatal
      fprintf(stderr, "run %d failed: %s\n", r + 1, e.what());
      ++failed;
    }
  double ref = median(plain.ms);
  print_row("plain replay, start to end", plain);
  print_row("replay with a breakpoint on a line never run", unreached, ref);
  print_row("continue from the start to the 1st pass (set pending)", first, ref);
  print_row("reverseContinue from the end to the last pass (line)", back);
  print_row("reverseContinue to the previous pass (line)", prev);
  print_row("continue to the next pass (line)", next);
  print_row("reverseContinue from the end to the last pass (function)", fn_back);
  print_row("reverseContinue to the previous pass (function)", fn_prev);
  print_row("continue to the next pass (function)", fn_next);
  if (failed) printf("%d of %d runs failed (errors above)\n", failed, runs);
  return failed + plain.wrong + unreached.wrong + first.wrong + back.wrong + prev.wrong +
                 next.wrong + fn_back.wrong + fn_prev.wrong + fn_next.wrong
             ? 1
             : 0;
}
