// The Python stack read out of a replayed python3 (engine/interp): tests/programs/
// nested_calls.py recorded once, stopped at a native breakpoint (clock_nanosleep under
// time.sleep), then every frame's function, file, line and locals checked exactly.
#include "engine/interp/python/python_frames.h"

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "engine/debugger/debugger.h"
#include "engine/interp/python/python_debug_offsets.h"
#include "engine/interp/python/python_objects.h"
#include "tests/support/interp_checks.h"
#include "tests/support/interpreters.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using namespace rwd;

namespace {

std::map<std::string, std::string> locals_of(const InterpFrame& f) {
  std::map<std::string, std::string> out;
  for (const InterpVariable& v : f.locals) out[v.name] = v.value + " : " + v.type;
  return out;
}

int line_of(const std::string& marker) {
  return int(test::line_of(SCRIPT, marker));
}

}  // namespace

TEST_CASE("co_linetable decoding", "[interp]") {
  // def f():            firstlineno 1
  //     x = 1           line 2
  //     return x        line 3
  // Entries: RESUME at line 1 (code 10: one-line form, +0, 1 unit); two units on line 2
  // (code 11, +1); two units on line 3 (code 11, +1); one unit with no location (15).
  std::vector<uint8_t> table = {0x80 | (10 << 3) | 0, 0, 0,  0x80 | (11 << 3) | 1, 4, 5,
                                0x80 | (11 << 3) | 1, 4, 12, 0x80 | (15 << 3) | 0};
  CHECK(python_line(table, 1, 0) == 1);
  CHECK(python_line(table, 1, 1) == 2);
  CHECK(python_line(table, 1, 2) == 2);
  CHECK(python_line(table, 1, 3) == 3);
  CHECK(python_line(table, 1, 5) == 0);   // no location
  CHECK(python_line(table, 1, 99) == 0);  // past the end
  // code 13 (no columns) with a negative svarint delta: -2 is (2 << 1) | 1 = 5.
  std::vector<uint8_t> back = {0x80 | (13 << 3) | 0, 5};
  CHECK(python_line(back, 10, 0) == 8);
  // code 14 (long form): +300 as a two-chunk varint (600 = 0b1001011000: 24 | 64, 9).
  std::vector<uint8_t> longform = {0x80 | (14 << 3) | 2, 24 | 64, 9, 0, 0, 0};
  CHECK(python_line(longform, 1, 2) == 301);
}

TEST_CASE("the Python stack of a replayed python3 at a native breakpoint", "[interp][python]") {
  Timeline tl(test::recorded_trace(REWIND_BIN, test::python() + " " + SCRIPT));
  Debugger dbg(tl);
  BreakpointSpec spec;
  spec.function = "clock_nanosleep";
  auto bps = dbg.set_function_breakpoints({spec});
  DebugStop d = dbg.resume(Direction::Forward);
  REQUIRE(d.stop.reason == StopReason::Breakpoint);
  pid_t tid = d.stop.tid;
  InterpMemory mem(dbg.target(tid));
  std::optional<PythonReader> py = PythonReader::find(dbg.modules(), mem);
  REQUIRE(py.has_value());
  CHECK(py->version().rfind("3.", 0) == 0);
  if (!test::python_version().empty()) CHECK(py->version() == test::python_version());
  if (py->layout().minor >= 13) {
    // 3.13 on: the layout was checked against the interpreter's own _Py_DebugOffsets; a table
    // that differs from them in one field, or a version that is not the interpreter's, is
    // refused with the field named; no cookie there: not mapped yet.
    uint64_t runtime = data_symbol_address(dbg.modules(), "_PyRuntime");
    uint32_t version = mem.u32(data_symbol_address(dbg.modules(), "Py_Version"));
    CHECK(check_python_debug_offsets(mem, runtime, py->layout(), version));
    PythonLayout wrong = py->layout();
    wrong.frame_localsplus += 8;
    CHECK_THROWS_WITH(
        check_python_debug_offsets(mem, runtime, wrong, version),
        Catch::Contains("interpreter_frame.localsplus") && Catch::Contains("not one rewind knows"));
    CHECK_THROWS_WITH(check_python_debug_offsets(mem, runtime, py->layout(), version + 1),
                      Catch::Contains("_Py_DebugOffsets names version"));
    CHECK(!check_python_debug_offsets(mem, runtime + 8, py->layout(), version));  // no cookie
  }
  std::vector<InterpFrame> stack = py->stack(mem, tid);
  REQUIRE(stack.size() == 6);
  for (const InterpFrame& f : stack) {
    INFO(f.function << " " << f.error);
    CHECK(f.error.empty());
    CHECK(f.file == SCRIPT);
    CHECK(f.language == "python");
  }
  CHECK(stack[0].function == "Pipeline.stage");
  CHECK(stack[0].line == line_of("time.sleep(0.001)"));
  auto deepest = locals_of(stack[0]);
  CHECK(deepest["self"].find("<Pipeline object at 0x") == 0);
  CHECK(deepest["self"].find("0x0x") == std::string::npos);  // the address once, as repr() has it
  CHECK(deepest["depth"] == "0 : int");
  CHECK(deepest["label"] == "'axxx' : str");
  CHECK(deepest["ratio"] == "0.0 : float");
  CHECK(deepest["items"] == "[0, 'axxx', None] : list");
  CHECK(deepest["big"] == "1180591620717411303429 : int");  // 2**70 + 5: three digits
  CHECK(deepest["word"] == "'héllo' : str");
  CHECK(deepest["flag"] == "True : bool");
  CHECK(deepest.count("result") == 0);  // not bound yet
  for (int depth = 1; depth <= 3; ++depth) {
    const InterpFrame& f = stack[size_t(depth)];
    CHECK(f.function == "Pipeline.stage");
    CHECK(f.line == line_of("result = self.stage(depth - 1"));
    auto locals = locals_of(f);
    CHECK(locals["depth"] == std::to_string(depth) + " : int");
    CHECK(locals["label"] == "'" + std::string("axxx").substr(0, size_t(4 - depth)) + "' : str");
    CHECK(locals["ratio"] == (depth == 2   ? "0.5"
                              : depth == 1 ? "0.25"
                                           : "0.75") +
                                 std::string(" : float"));
  }
  CHECK(stack[4].function == "main");
  CHECK(stack[4].line == line_of("total = Pipeline().stage(3"));
  CHECK(stack[5].function == "<module>");
  CHECK(stack[5].line == line_of("# the entry call"));
  // Arguments are marked.
  for (const InterpVariable& v : stack[0].locals)
    CHECK(v.argument == (v.name == "self" || v.name == "depth" || v.name == "label"));
}

TEST_CASE("the Python stack read at every event and between them, checked against Python",
          "[interp][python]") {
  // At each event of the recording, and after each of a few random single steps after each
  // event (points in the middle of the eval loop's updates), the stack must read without a crash:
  // each frame readable or marked unavailable, lines inside the script. Where the script
  // printed "LINE function line" (sys._getframe in where()), the caller's frame must say
  // exactly what Python said.
  Timeline tl(test::recorded_trace(REWIND_BIN, test::python() + " " + SCRIPT));
  Debugger dbg(tl);
  std::string written;
  tl.set_output_listener([&](OutputStream, const std::string& b) { written += b; });
  int script_lines = line_of("# the entry call");
  std::optional<PythonReader> py;
  std::mt19937 rng(20261122);
  size_t reads = 0, compared = 0, with_frames = 0;
  auto read_here = [&](pid_t tid) {
    InterpMemory mem(dbg.target(tid));
    if (!py) py = PythonReader::find(dbg.modules(), mem);
    if (!py) return std::vector<InterpFrame>{};
    ++reads;
    std::vector<InterpFrame> stack = py->stack(mem, tid);
    with_frames += !stack.empty();
    test::check_frames(stack, SCRIPT, script_lines, false);
    return stack;
  };
  uint64_t events = tl.event_count();
  // Random steps after each event, about 1,200 in all: syscall buffering leaves a few hundred
  // events, tracing every syscall a few thousand. The loader's (41 cpuid events among them)
  // come before Python's library is found, and are about half of a buffered recording's since
  // its signal-state calls are buffered too (the signal module reads every signal's handler
  // at start): rounded up, and counted twice, so that they do not thin the rest.
  uint64_t most_steps = std::max<uint64_t>(2, (4800 + events - 1) / events);
  for (uint64_t n = 2; n < events; ++n) {
    written.clear();
    StopInfo s = tl.seek(n);
    dbg.refresh();  // must not throw after the last task exited
    pid_t tid = s.tid;
    std::vector<TaskInfo> tasks = tl.tasks();
    if (std::none_of(tasks.begin(), tasks.end(), [&](const TaskInfo& t) { return t.tid == tid; }))
      continue;  // the task of this event has exited
    std::vector<InterpFrame> stack = read_here(tid);
    if (written.rfind("LINE ", 0) == 0) {
      std::istringstream in(written.substr(5));
      std::string function;
      int line = 0;
      in >> function >> line;
      INFO("event " << n << ": Python said " << written);
      REQUIRE(stack.size() >= 2);
      CHECK(stack[0].function == "where");
      CHECK(stack[1].function == function);
      CHECK(stack[1].line == line);
      ++compared;
    }
    // Single steps into the code that runs up to the next event.
    for (int k = int(rng() % most_steps) + 1; k > 0; --k) {
      StopInfo st = tl.step_forward(tid);
      if (st.event != n) break;  // a syscall ended the step: the next seek starts there
      dbg.refresh();
      read_here(tid);
    }
  }
  INFO(reads << " reads, " << with_frames << " with Python frames");
  CHECK(reads >= 1000);
  CHECK(with_frames >= 100);
  CHECK(compared == 9);  // every where() call
}

// Run by ctest only where CMake found a CPython older than 3.11 (pyenv's, say), named in
// $REWIND_TEST_OLD_PYTHON: its frames cannot be read, and the reader must say so plainly.
TEST_CASE("an older CPython gets a clear message, not a wrong stack", "[.][old-python]") {
  const char* old = std::getenv("REWIND_TEST_OLD_PYTHON");
  REQUIRE(old);
  Timeline tl(test::recorded_trace(REWIND_BIN, std::string(old) + " -c 'import os; os.getpid()'"));
  Debugger dbg(tl);
  BreakpointSpec spec;
  spec.function = "getpid";  // (before 3.11, time.sleep called select, not clock_nanosleep)
  dbg.set_function_breakpoints({spec});
  DebugStop d = dbg.resume(Direction::Forward);
  REQUIRE(d.stop.reason == StopReason::Breakpoint);
  InterpMemory mem(dbg.target(d.stop.tid));
  CHECK_THROWS_WITH(PythonReader::find(dbg.modules(), mem),
                    Catch::Contains("older than 3.11") && Catch::Contains("3.11 to 3.14"));
}
