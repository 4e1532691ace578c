// Stepping by R lines (engine/debugger/r_stepper.h) through a replayed R sourcing
// tests/programs/r_steps.R, with R's JIT off (AST closures) and on (byte-compiled closures):
// from a native breakpoint under Sys.getpid(), next, stepIn, stepOut and their reverse
// forms move between the script's lines and frames as R's own srcrefs name them, over a
// call made through a function without source (sapply), and a step back retraces a step
// forward to the same instruction.
#include <catch2/catch.hpp>
#include <string>

#include "engine/debugger/debugger.h"
#include "engine/interp/r/r_frames.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/script_where.h"
#include "tests/support/source_line.h"

using namespace rwd;
using test::Where;

namespace {

int line_of(const std::string& marker) {
  return int(test::line_of(R_STEPS_SCRIPT, marker));
}

/// R's own binary sourcing the script with srcrefs kept and JIT level `jit`.
std::string r_command(const std::string& jit) {
  setenv("R_HOME", "/usr/lib/R", 1);
  setenv("R_ENABLE_JIT", jit.c_str(), 1);
  return "/usr/lib/R/bin/exec/R --no-echo --no-restore -e 'options(keep.source = TRUE); "
         "source(\"" +
         std::string(R_STEPS_SCRIPT) + "\")' --args jit" + jit;
}

}  // namespace

TEST_CASE("next, stepIn, stepOut and their reverse by R lines, JIT off and on",
          "[interp][r][r-steps][debug-registers]") {
  for (std::string jit : {"0", "3"}) {
    INFO("R_ENABLE_JIT=" << jit);
    Timeline tl(test::recorded_trace(REWIND_BIN, r_command(jit)));
    Debugger dbg(tl);
    BreakpointSpec spec;
    spec.function = "getpid";
    dbg.set_function_breakpoints({spec});
    std::optional<RReader> r;
    pid_t tid = 0;
    auto stack = [&] {
      InterpMemory mem(dbg.target(tid));
      return r->stack(mem);
    };
    // R calls getpid as it starts too: on to the call under accumulate().
    for (;;) {
      DebugStop d = dbg.resume(Direction::Forward);
      REQUIRE(d.stop.reason == StopReason::Breakpoint);
      tid = d.stop.tid;
      InterpMemory mem(dbg.target(tid));
      if (!r) r = RReader::find(dbg.modules(), mem);
      if (!r) continue;
      std::vector<InterpFrame> st = r->stack(mem);
      if (st.size() > 1 && st[1].function == "accumulate") break;
    }
    dbg.set_function_breakpoints({});
    CHECK(r->step_globals().bcpc != 0);  // found in Debian's libR (r_bytecode_globals.h)
    auto where = [&] {
      std::vector<InterpFrame> st = stack();
      REQUIRE(!st.empty());
      return Where{st.size(), st[0].function, st[0].line};
    };
    auto step = [&](StepKind kind, Direction dir) {
      DebugStop s = dbg.step_r(tid, *r, kind, dir);
      CHECK(s.stop.reason == StopReason::Step);
      CHECK(s.stop.tid == tid);
      return where();
    };
    const size_t depth = where().depth - 1;               // accumulate's, under Sys.getpid()
    CHECK(where() == Where{depth + 1, "Sys.getpid", 0});  // base R: no source

    // Out of Sys.getpid into the line that called it, then on through accumulate's lines.
    CHECK(step(StepKind::Out, Direction::Forward) ==
          Where{depth, "accumulate", line_of("# the marker")});
    CHECK(step(StepKind::Over, Direction::Forward) ==
          Where{depth, "accumulate", line_of("total <- total * 2")});
    Registers times2 = tl.registers(tid);
    CHECK(step(StepKind::Over, Direction::Forward) ==
          Where{depth, "accumulate", line_of("doubled <- sapply")});
    // Into square() through sapply and lapply (no source), at its first line.
    Where in_square = step(StepKind::Into, Direction::Forward);
    CHECK(in_square.function == "FUN");  // as lapply calls it (sys.call())
    CHECK(in_square.depth > depth + 1);
    CHECK(in_square.line == line_of("w <- v * v"));
    CHECK(step(StepKind::Over, Direction::Forward) ==
          Where{in_square.depth, "FUN", line_of("w + 0")});
    // The return goes through lapply's C code and the second call of square() without
    // stopping, back to the line of the call.
    CHECK(step(StepKind::Over, Direction::Forward) ==
          Where{depth, "accumulate", line_of("doubled <- sapply")});
    CHECK(step(StepKind::Over, Direction::Forward) ==
          Where{depth, "accumulate", line_of("total + sum(doubled)")});

    // Back: the start of the previous lines, over the calls on them.
    CHECK(step(StepKind::Over, Direction::Backward) ==
          Where{depth, "accumulate", line_of("doubled <- sapply")});
    CHECK(step(StepKind::Over, Direction::Backward) ==
          Where{depth, "accumulate", line_of("total <- total * 2")});
    CHECK(tl.registers(tid).rip == times2.rip);  // where the step forward landed
    CHECK(tl.registers(tid).rsp == times2.rsp);
    // Reverse step-in: Sys.getpid() has no source, so the line before; from there, into the
    // call of square() on the line before, at its last line.
    CHECK(step(StepKind::Into, Direction::Backward) ==
          Where{depth, "accumulate", line_of("# the marker")});
    CHECK(step(StepKind::Into, Direction::Backward) ==
          Where{depth + 1, "square", line_of("w + 0")});
    CHECK(step(StepKind::Over, Direction::Backward) ==
          Where{depth + 1, "square", line_of("w <- v * v")});
    // Back from a function's first line: the call in its caller.
    CHECK(step(StepKind::Over, Direction::Backward) ==
          Where{depth, "accumulate", line_of("# the last call")});
    // Back over the end of the loop: byte code runs the `for` line's own instructions at
    // the end of each pass (as Python shows the `for` line); the AST evaluator marks only
    // the start of each statement in the body.
    CHECK(step(StepKind::Over, Direction::Backward) ==
          Where{depth, "accumulate",
                line_of(jit == "0" ? "total <- total + square(i)" : "for (i in 1:n)")});
    // Reverse step-out: the call of accumulate() in main(); then over it forwards.
    CHECK(step(StepKind::Out, Direction::Backward) ==
          Where{depth - 1, "main", line_of("# the call")});
    CHECK(step(StepKind::Over, Direction::Forward) ==
          Where{depth - 1, "main", line_of("cat(\"result\"")});
  }
}
