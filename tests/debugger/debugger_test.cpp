// The source-level debugger on a replay of tests/programs/symbols_demo.c: line and function
// breakpoints with conditions, hit counts and logpoints, both ways; next/step/finish both
// ways, where reverse-next must retrace next exactly; a watch expression.
#include "engine/debugger/debugger.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using namespace rwd;

namespace {

uint32_t line_of(const std::string& marker) {
  return test::line_of(SOURCE_C, marker);
}

std::vector<const char*> programs() {
  std::vector<const char*> p = {DEMO_GCC_O0};
  if (std::string(DEMO_CLANG_O0).size()) p.push_back(DEMO_CLANG_O0);
  return p;
}

/// A debugging session on a fresh timeline of `program`'s trace.
struct Session {
  Timeline tl;
  Debugger dbg;
  pid_t tid;
  explicit Session(const std::string& program)
      : tl(test::recorded_trace(REWIND_BIN, program)), dbg(tl), tid(tl.current().tid) {}
  const StackFrame& top() { return dbg.stack(tid).at(0); }
  std::string eval(const std::string& e) {
    return format_value(dbg.evaluate(tid, 0, e), dbg.target(tid));
  }
  BreakpointSpec at(const char* marker) {
    BreakpointSpec s;
    s.line = line_of(marker);
    return s;
  }
};

}  // namespace

TEST_CASE("line breakpoints: conditions, hit counts, logpoints, both directions", "[debugger]") {
  for (const char* program : programs()) {
    INFO(program);
    Session s(program);
    BreakpointSpec spec = s.at("total += i;");
    auto bps = s.dbg.set_source_breakpoints("symbols_demo.c", {spec});
    REQUIRE(bps.size() == 1);
    REQUIRE(!bps[0].addrs.empty());
    CHECK(bps[0].line == spec.line);

    DebugStop d = s.dbg.resume(Direction::Forward);
    REQUIRE(d.stop.reason == StopReason::Breakpoint);
    CHECK(d.breakpoint_ids == std::vector<int>{bps[0].id});
    CHECK(s.top().function == "loop_sum");
    CHECK(s.top().line == spec.line);
    CHECK(s.eval("i") == "0");
    REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Breakpoint);
    CHECK(s.eval("i") == "1");
    REQUIRE(s.dbg.resume(Direction::Backward).stop.reason == StopReason::Breakpoint);
    CHECK(s.eval("i") == "0");

    // A condition: only where it holds, forwards and backwards.
    spec.condition = "i == 2";
    s.dbg.set_source_breakpoints("symbols_demo.c", {spec});
    REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Breakpoint);
    CHECK(s.eval("i") == "2");
    CHECK(s.eval("total") == "1");
    CHECK(s.dbg.resume(Direction::Forward).stop.reason == StopReason::TraceEnd);
    REQUIRE(s.dbg.resume(Direction::Backward).stop.reason == StopReason::Breakpoint);
    CHECK(s.eval("i") == "2");

    // A logpoint prints and never stops.
    spec.condition.clear();
    spec.log_message = "i={i} total={total}";
    s.dbg.set_source_breakpoints("symbols_demo.c", {spec});
    s.tl.seek(1);
    d = s.dbg.resume(Direction::Forward);
    CHECK(d.stop.reason == StopReason::TraceEnd);
    CHECK(d.log == std::vector<std::string>{"i=0 total=0", "i=1 total=0", "i=2 total=1"});

    // A hit count: the third hit.
    spec.log_message.clear();
    spec.hit_condition = "3";
    s.dbg.set_source_breakpoints("symbols_demo.c", {spec});
    s.tl.seek(1);
    REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Breakpoint);
    CHECK(s.eval("i") == "2");

    // A condition that cannot be evaluated stops, with gdb's explanation.
    spec.hit_condition.clear();
    spec.condition = "nosuch > 1";
    s.dbg.set_source_breakpoints("symbols_demo.c", {spec});
    s.tl.seek(1);
    d = s.dbg.resume(Direction::Forward);
    CHECK(d.stop.reason == StopReason::Breakpoint);
    CHECK(d.error.find("No symbol \"nosuch\" in current context.") != std::string::npos);
    // Removing the breakpoint lets the program run to its end.
    s.dbg.set_source_breakpoints("symbols_demo.c", {});
    CHECK(s.dbg.resume(Direction::Forward).stop.reason == StopReason::TraceEnd);
  }
}

TEST_CASE("reverse-next retraces next over a loop, lines in exact reverse order", "[debugger]") {
  for (const char* program : programs()) {
    INFO(program);
    Session s(program);
    BreakpointSpec fn;
    fn.function = "loop_sum";
    auto bps = s.dbg.set_function_breakpoints({fn});
    REQUIRE(bps.size() == 1);
    REQUIRE(!bps[0].addrs.empty());
    REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Breakpoint);
    CHECK(s.top().line == line_of("int total = 0;"));
    s.dbg.set_function_breakpoints({});

    std::string total_at_start = s.eval("total");  // not yet initialized: whatever was there

    // Forward with next through the whole function until it returns into main.
    std::vector<uint32_t> forward = {s.top().line};
    for (;;) {
      DebugStop d = s.dbg.step(s.tid, StepKind::Over, Direction::Forward);
      REQUIRE(d.stop.reason == StopReason::Step);
      if (s.top().function != "loop_sum") break;
      forward.push_back(s.top().line);
      REQUIRE(forward.size() < 40);
    }
    CHECK(s.top().function == "main");
    uint32_t after = s.top().line;
    CHECK(after == line_of("ratio = scaled(ratio, count);"));
    // The loop body ran three times: each of its lines was visited three times.
    CHECK(std::count(forward.begin(), forward.end(), line_of("total += i;")) == 3);
    CHECK(std::count(forward.begin(), forward.end(), line_of("sink = total;")) == 3);

    // reverse-next from there steps back over the whole call, to the calling line...
    REQUIRE(s.dbg.step(s.tid, StepKind::Over, Direction::Backward).stop.reason == StopReason::Step);
    CHECK(s.top().function == "main");
    CHECK(s.top().line == line_of("int sum = loop_sum(3);"));
    REQUIRE(s.dbg.step(s.tid, StepKind::Over, Direction::Forward).stop.reason == StopReason::Step);
    CHECK(s.top().line == after);
    // ...and reverse-step goes into it, to the last line next stopped at.
    REQUIRE(s.dbg.step(s.tid, StepKind::Into, Direction::Backward).stop.reason == StopReason::Step);
    CHECK(s.top().function == "loop_sum");
    CHECK(s.top().line == forward.back());
    CHECK(s.eval("total") == "3");

    // Backward with reverse-next to the first line: the same stops in reverse order.
    std::vector<uint32_t> backward = {s.top().line};
    for (size_t i = 1; i < forward.size(); ++i) {
      DebugStop d = s.dbg.step(s.tid, StepKind::Over, Direction::Backward);
      INFO("reverse-next " << i << " from line " << backward.back());
      REQUIRE(d.stop.reason == StopReason::Step);
      REQUIRE(s.top().function == "loop_sum");
      backward.push_back(s.top().line);
    }
    std::reverse(backward.begin(), backward.end());
    CHECK(backward == forward);
    CHECK(s.eval("total") == total_at_start);  // the state is back too
  }
}

TEST_CASE("step into, finish, and their reverse forms", "[debugger]") {
  for (const char* program : programs()) {
    INFO(program);
    Session s(program);
    auto bps = s.dbg.set_source_breakpoints("symbols_demo.c", {s.at("recurse(4);")});
    REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Breakpoint);
    s.dbg.set_source_breakpoints("symbols_demo.c", {});

    // step: into recurse, past its prologue, at its first line.
    REQUIRE(s.dbg.step(s.tid, StepKind::Into, Direction::Forward).stop.reason == StopReason::Step);
    CHECK(s.top().function == "recurse");
    CHECK(s.top().line == line_of("if (n == 0) {"));
    CHECK(s.eval("n") == "4");
    // finish: back in main, just after the call returned; the call was the last instruction
    // of its line, so that is the start of the next line (gdb shows the same).
    REQUIRE(s.dbg.step(s.tid, StepKind::Out, Direction::Forward).stop.reason == StopReason::Step);
    CHECK(s.top().function == "main");
    CHECK(s.top().line == line_of("qsort(values"));
    CHECK(s.eval("$pc") == s.eval("$pc"));
    // reverse-step from there goes into recurse's last line.
    REQUIRE(s.dbg.step(s.tid, StepKind::Into, Direction::Backward).stop.reason == StopReason::Step);
    CHECK(s.top().function == "recurse");
    CHECK(s.eval("n") == "4");
    CHECK(s.top().line > line_of("int recurse(int n)"));
    // reverse-finish: out of recurse to the call in main.
    REQUIRE(s.dbg.step(s.tid, StepKind::Out, Direction::Backward).stop.reason == StopReason::Step);
    CHECK(s.top().function == "main");
    CHECK(s.top().line == line_of("recurse(4);"));

    // next over a call stops at a breakpoint inside it.
    BreakpointSpec fn;
    fn.function = "stop_here";
    s.dbg.set_function_breakpoints({fn});
    DebugStop d = s.dbg.step(s.tid, StepKind::Over, Direction::Forward);
    CHECK(d.stop.reason == StopReason::Breakpoint);
    CHECK(s.top().function == "stop_here");
    CHECK(s.eval("tag") == "100");
  }
}

TEST_CASE("reverse-next in a frame that cannot be unwound goes back one instruction",
          "[debugger]") {
  // The loader's _start (hand-written, no CFI, no line information) just after _dl_start
  // returned into it: a reverse line step from there once searched for a line start for
  // ever (DAP fuzzing found it); it goes back one instruction, onto _dl_start's return.
  Session s(DEMO_GCC_O0);
  uint64_t entry = s.tl.registers(s.tid).rip;  // the loader's entry: mov %rsp,%rdi; call
  BreakpointSpec after_call;
  after_call.address = entry + 8;
  s.dbg.set_instruction_breakpoints({after_call});
  REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Breakpoint);
  s.dbg.set_instruction_breakpoints({});
  REQUIRE(s.tl.registers(s.tid).rip == entry + 8);
  DebugStop back = s.dbg.step(s.tid, StepKind::Over, Direction::Backward);
  REQUIRE(back.stop.reason == StopReason::Step);
  auto ret = s.tl.read_memory(s.tid, s.tl.registers(s.tid).rip, 1);
  REQUIRE(ret.size() == 1);
  CHECK(ret[0] == 0xc3);  // _dl_start's ret
}

TEST_CASE("a watch expression becomes a hardware watchpoint, both ways", "[debugger]") {
  Session s(DEMO_GCC_O0);
  auto bps = s.dbg.set_source_breakpoints("symbols_demo.c", {s.at("total += i;")});
  REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Breakpoint);
  s.dbg.set_source_breakpoints("symbols_demo.c", {});
  WatchInfo w = s.dbg.watch(s.tid, 0, "total", WatchKind::Write);
  CHECK(w.len == 4);
  CHECK(w.type == "int");
  // A write that leaves the value as it was (total += 0) is not a change: as gdb's watch.
  DebugStop d = s.dbg.resume(Direction::Forward);
  REQUIRE(d.stop.reason == StopReason::Watchpoint);
  CHECK(s.eval("i") == "1");
  CHECK(s.eval("total") == "1");
  REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Watchpoint);
  CHECK(s.eval("total") == "3");
  // Backwards: the last change before now (the one just seen), on the writing instruction
  // before it runs; then the one before it.
  d = s.dbg.resume(Direction::Backward);
  REQUIRE(d.stop.reason == StopReason::Watchpoint);
  CHECK(s.eval("i") == "2");
  CHECK(s.eval("total") == "1");
  d = s.dbg.resume(Direction::Backward);
  REQUIRE(d.stop.reason == StopReason::Watchpoint);
  CHECK(s.eval("i") == "1");
  CHECK(s.eval("total") == "0");
  s.dbg.unwatch(w, WatchKind::Write);
  CHECK_THROWS_WITH(s.dbg.watch(s.tid, 0, "total + 1", WatchKind::Write),
                    "cannot watch \"total + 1\": it is not a value in memory");
  // A struct wider than a debug register is a software watch, for writes only.
  CHECK_THROWS_WITH(s.dbg.watch(s.tid, 1, "tri", WatchKind::ReadWrite),
                    Catch::Contains("56 bytes can be watched for writes only"));
  WatchInfo wide = s.dbg.watch(s.tid, 1, "tri", WatchKind::Write);
  CHECK(wide.len == 56);
  s.dbg.unwatch(wide, WatchKind::Write);
}

TEST_CASE("function breakpoints by C++ qualified name", "[debugger]") {
  Session s(DEMO_CPP);
  BreakpointSpec full, partial, plain, missing;
  full.function = "geo::Square::area";
  partial.function = "Square::area";
  plain.function = "area";
  missing.function = "nosuch";
  auto bps = s.dbg.set_function_breakpoints({full, partial, plain, missing});
  REQUIRE(bps.size() == 4);
  REQUIRE(bps[0].addrs.size() == 1);
  CHECK(bps[1].addrs == bps[0].addrs);
  CHECK(bps[2].addrs == bps[0].addrs);
  CHECK(bps[3].addrs.empty());
  CHECK(bps[3].message == "Function \"nosuch\" not defined.");
  DebugStop d = s.dbg.resume(Direction::Forward);
  REQUIRE(d.stop.reason == StopReason::Breakpoint);
  CHECK(d.breakpoint_ids.size() == 3);
  CHECK(s.top().function == "geo::Square::area");
  CHECK_THROWS_WITH(s.eval("side_"), "No symbol \"side_\" in current context.");
  CHECK(s.eval("this->side_") == "3");
  // The template instance by its name with arguments.
  BreakpointSpec twice;
  twice.function = "geo::twice<int>";
  bps = s.dbg.set_function_breakpoints({twice});
  REQUIRE(bps[0].addrs.size() == 1);
  REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Breakpoint);
  CHECK(s.top().function == "geo::twice<int>");
}

TEST_CASE("a breakpoint hit in a forked child is stepped over like any other", "[debugger]") {
  // bash forks a child for each subshell, and the child calls getpid: the child inherits the
  // breakpoint's int3 with its parent's memory. Each hit must be a new one, and the run must
  // reach the end of the recording. (bash's own getpid calls at start-up are buffered: several
  // hits between two events, told apart by their return addresses.)
  Timeline tl(test::recorded_trace(REWIND_BIN, "/bin/bash -c '(true); (true); (true)'"));
  Debugger dbg(tl);
  BreakpointSpec spec;
  spec.function = "getpid";
  dbg.set_function_breakpoints({spec});
  std::set<std::tuple<uint64_t, pid_t, uint64_t>> seen;
  int hits = 0;
  for (int i = 0; i < 200; ++i) {
    DebugStop d = dbg.resume(Direction::Forward);
    if (d.stop.reason != StopReason::Breakpoint) {
      CHECK(d.stop.reason == StopReason::TraceEnd);
      break;
    }
    ++hits;
    INFO("hit at event " << d.stop.event << " in task " << d.stop.tid);
    uint64_t rsp = tl.registers(d.stop.tid).rsp, ret = 0;
    auto bytes = tl.read_memory(d.stop.tid, rsp, 8);  // at getpid's entry: the return address
    if (bytes.size() == 8) memcpy(&ret, bytes.data(), 8);
    CHECK(seen.insert({d.stop.event, d.stop.tid, ret}).second);  // not the same hit again
  }
  CHECK(hits >= 2);  // in the children (bash runs the last subshell without a fork)
  CHECK(hits < 200);
}

TEST_CASE("a breakpoint reached by a return from a stop is hit, both ways", "[debugger]") {
  // tests/programs/call_loop.c: `total += i;` starts at note()'s return address.
  Session s(CALL_LOOP);
  BreakpointSpec line;
  line.file = CALL_LOOP_C;
  line.line = test::line_of(CALL_LOOP_C, "total += i;");
  uint32_t call_line = test::line_of(CALL_LOOP_C, "note(i);");
  REQUIRE(!s.dbg.set_source_breakpoints(CALL_LOOP_C, {line}).at(0).addrs.empty());
  REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Breakpoint);
  CHECK(s.eval("i") == "0");
  REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Breakpoint);
  CHECK(s.eval("i") == "1");
  // Reverse-next steps back over note(1) to its call, in the same iteration. (Its backward
  // search once stepped over the breakpoint at note()'s `ret` onto this line's breakpoint
  // without counting that hit, and stopped at the previous iteration's hit instead.)
  REQUIRE(s.dbg.step(s.tid, StepKind::Over, Direction::Backward).stop.reason == StopReason::Step);
  CHECK(s.top().line == call_line);
  CHECK(s.eval("i") == "1");

  // Forward: a breakpoint on note()'s `ret` too. Continuing from a stop there returns straight
  // onto the line's breakpoint, which must stop: ret, line, ret, line...
  REQUIRE(s.dbg.step(s.tid, StepKind::Into, Direction::Forward).stop.reason == StopReason::Step);
  REQUIRE(s.top().function == "note");
  uint64_t ret = 0;
  while (s.top().function == "note") {
    ret = s.top().pc;
    REQUIRE(s.dbg.step_instruction(s.tid, Direction::Forward).stop.reason == StopReason::Step);
  }
  CHECK(s.top().line == line.line);
  BreakpointSpec at_ret;
  at_ret.address = ret;
  REQUIRE(!s.dbg.set_instruction_breakpoints({at_ret}).at(0).addrs.empty());
  REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Breakpoint);
  CHECK(s.top().pc == ret);  // note(2)'s ret
  REQUIRE(s.dbg.resume(Direction::Forward).stop.reason == StopReason::Breakpoint);
  CHECK(s.top().line == line.line);
  CHECK(s.eval("i") == "2");
  // And back: from there the previous hit is the `ret`, then the line in the iteration before.
  REQUIRE(s.dbg.resume(Direction::Backward).stop.reason == StopReason::Breakpoint);
  CHECK(s.top().pc == ret);
  REQUIRE(s.dbg.resume(Direction::Backward).stop.reason == StopReason::Breakpoint);
  CHECK(s.top().line == line.line);
  CHECK(s.eval("i") == "1");
}

TEST_CASE("breakpoints bind per program, across fork and exec, both ways", "[debugger]") {
  // tests/programs/exec_pair.c runs parent_step(0..2), then exec_pair_child in a child
  // (child_step(0..2), the same code at the same address), then parent_step(3..5). A
  // breakpoint must go into the code it was set in, in whichever process maps it, and nowhere
  // else. (Breakpoints once bound by address in every process: the parent's line hit in the
  // child too, and re-binding at a stop in the child dropped it from the parent.)
  Session s(std::string(EXEC_PAIR) + " " + EXEC_PAIR_CHILD);
  const pid_t parent = s.tid;
  BreakpointSpec line;
  line.line = test::line_of(EXEC_PAIR_C, "done += i;");
  auto lines = s.dbg.set_source_breakpoints(EXEC_PAIR_C, {line});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].sites.size() == 1);
  BreakpointSpec fn;
  fn.function = "child_step";
  auto fns = s.dbg.set_function_breakpoints({fn});
  // Bound in the child's program, saved in the trace, before any process maps it.
  CHECK(fns.at(0).sites.size() == 1);

  int line_id = lines[0].id;
  const int fn_id = fns.at(0).id;
  // "p" or "c" (parent_step or child_step) and i; the stop must be the breakpoint set there.
  auto where = [&](const DebugStop& d) {
    pid_t tid = d.stop.tid;
    const StackFrame& top = s.dbg.stack(tid).at(0);
    std::string i = format_value(s.dbg.evaluate(tid, 0, "i"), s.dbg.target(tid));
    if (top.function == "parent_step") {
      CHECK(tid == parent);
      CHECK(d.breakpoint_ids == std::vector<int>{line_id});
      return "p" + i;
    }
    CHECK(top.function == "child_step");
    CHECK(tid != parent);
    CHECK(d.breakpoint_ids == std::vector<int>{fn_id});
    return "c" + i;
  };
  std::vector<std::string> forward;
  for (int n = 0; n < 20; ++n) {
    DebugStop d = s.dbg.resume(Direction::Forward);
    if (d.stop.reason == StopReason::TraceEnd) break;
    REQUIRE(d.stop.reason == StopReason::Breakpoint);
    forward.push_back(where(d));
    if (forward.back() == "c0") {
      // Set again while stopped in the child, whose program has no such file: still armed
      // in the parent's program, seen before.
      auto again = s.dbg.set_source_breakpoints(EXEC_PAIR_C, {line});
      CHECK(again.at(0).sites.size() == 1);
      CHECK(again.at(0).line == line.line);
      line_id = again.at(0).id;
    }
  }
  CHECK(forward == std::vector<std::string>{"p0", "p1", "p2", "c0", "c1", "c2", "p3", "p4", "p5"});

  std::vector<std::string> backward;
  for (int n = 0; n < 20; ++n) {
    DebugStop d = s.dbg.resume(Direction::Backward);
    if (d.stop.reason == StopReason::TraceStart) break;
    REQUIRE(d.stop.reason == StopReason::Breakpoint);
    backward.push_back(where(d));
  }
  CHECK(backward == std::vector<std::string>{"p5", "p4", "p3", "c2", "c1", "c0", "p2", "p1", "p0"});
}
