// Stepping by Python lines (engine/debugger/python_stepper.h) through a replayed python3
// running tests/programs/nested_calls.py: from a native breakpoint under time.sleep, next,
// stepBack, stepIn and stepOut move between the script's lines and frames as pdb would show
// them, forwards and backwards, and a step back retraces a step forward.
#include <catch2/catch.hpp>
#include <string>

#include "engine/debugger/debugger.h"
#include "engine/interp/python/python_frames.h"
#include "tests/support/interpreters.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/script_where.h"
#include "tests/support/source_line.h"

using namespace rwd;
using test::Where;

namespace {

int line_of(const std::string& marker) {
  return int(test::line_of(SCRIPT, marker));
}

}  // namespace

TEST_CASE("next, stepBack, stepIn and stepOut by Python lines", "[interp][python]") {
  Timeline tl(test::recorded_trace(REWIND_BIN, test::python() + " " + SCRIPT));
  Debugger dbg(tl);
  BreakpointSpec spec;
  spec.function = "clock_nanosleep";
  dbg.set_function_breakpoints({spec});
  DebugStop d = dbg.resume(Direction::Forward);
  REQUIRE(d.stop.reason == StopReason::Breakpoint);
  dbg.set_function_breakpoints({});
  pid_t tid = d.stop.tid;
  std::optional<PythonReader> py;
  {
    InterpMemory mem(dbg.target(tid));
    py = PythonReader::find(dbg.modules(), mem);
  }
  REQUIRE(py.has_value());
  auto where = [&] {
    InterpMemory mem(dbg.target(tid));
    std::vector<InterpFrame> st = py->stack(mem, tid);
    REQUIRE(!st.empty());
    return Where{st.size(), st[0].function, st[0].line};
  };
  auto step = [&](StepKind kind, Direction dir) {
    DebugStop s = dbg.step_python(tid, *py, kind, dir);
    CHECK(s.stop.reason == StopReason::Step);
    CHECK(s.stop.tid == tid);
    return where();
  };
  const std::string stage = "Pipeline.stage";
  int sleep_line = line_of("time.sleep(0.001)");
  int call_line = line_of("result = self.stage(depth - 1");
  CHECK(where() == Where{6, stage, sleep_line});

  // Forward through the deepest frame and out of it.
  CHECK(step(StepKind::Over, Direction::Forward) == Where{6, stage, sleep_line + 1});
  CHECK(step(StepKind::Over, Direction::Forward) == Where{6, stage, sleep_line + 2});
  // The return: in the caller, on the line of its call (the result is stored there).
  CHECK(step(StepKind::Over, Direction::Forward) == Where{5, stage, call_line});
  CHECK(step(StepKind::Over, Direction::Forward) == Where{5, stage, call_line + 1});
  Registers there = tl.registers(tid);

  // Back: to the start of the call's line, then to the line before it in that frame (the
  // `if` whose body it skipped), stepping over the whole deeper call.
  CHECK(step(StepKind::Over, Direction::Backward) == Where{5, stage, call_line});
  CHECK(step(StepKind::Over, Direction::Backward) == Where{5, stage, line_of("if depth == 0:")});
  // Forward again retraces it, to the same instruction and registers.
  CHECK(step(StepKind::Over, Direction::Forward) == Where{5, stage, call_line});
  // Into the call: the new frame at its `def` line, then its first line.
  CHECK(step(StepKind::Into, Direction::Forward) == Where{6, stage, line_of("def stage(")});
  CHECK(step(StepKind::Over, Direction::Forward) == Where{6, stage, line_of("ratio = depth / 4")});
  // Back from a frame's first line: its def line, then the call in the caller.
  CHECK(step(StepKind::Over, Direction::Backward) == Where{6, stage, line_of("def stage(")});
  CHECK(step(StepKind::Over, Direction::Backward) == Where{5, stage, call_line});
  CHECK(step(StepKind::Into, Direction::Forward) == Where{6, stage, line_of("def stage(")});
  CHECK(step(StepKind::Over, Direction::Forward) == Where{6, stage, line_of("ratio = depth / 4")});
  // Out: back in the caller after the call returned.
  CHECK(step(StepKind::Out, Direction::Forward) == Where{5, stage, call_line});
  CHECK(step(StepKind::Over, Direction::Forward) == Where{5, stage, call_line + 1});
  CHECK(tl.registers(tid).rip == there.rip);
  CHECK(tl.registers(tid).rsp == there.rsp);

  // Out twice more: the outermost stage, then main; Into stops at main's next line before
  // it makes that line's call.
  CHECK(step(StepKind::Out, Direction::Forward) == Where{4, stage, call_line});
  CHECK(step(StepKind::Out, Direction::Forward) == Where{3, stage, call_line});
  int main_line = line_of("total = Pipeline()");
  CHECK(step(StepKind::Out, Direction::Forward) == Where{2, "main", main_line});
  CHECK(step(StepKind::Into, Direction::Forward) == Where{2, "main", main_line + 1});
  CHECK(step(StepKind::Into, Direction::Forward) == Where{3, "where", line_of("def where(")});
  CHECK(step(StepKind::Over, Direction::Backward) == Where{2, "main", main_line + 1});
  CHECK(step(StepKind::Over, Direction::Backward) == Where{2, "main", main_line});
}
