// R line breakpoints (engine/debugger/r_breakpoints.h) in a replayed R sourcing
// tests/programs/r_lines/main.R, with R's JIT off (AST closures) and on (byte-compiled
// closures): a breakpoint set before R runs is pending, binds (on the next line with a
// statement) when the helper file is sourced, stops at each call of accumulate() with its
// locals, forwards and backwards; conditions in R, logpoints, and a breakpoint in the main
// script's top-level loop, bound as it runs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "engine/debugger/debugger.h"
#include "engine/interp/interpreter.h"
#include "engine/interp/r/r_frames.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"

using namespace rwd;

namespace {

int line_of(const char* file, const std::string& marker) {
  return int(test::line_of(file, marker));
}

/// R's own binary sourcing main.R with srcrefs kept and JIT level `jit`.
std::string r_command(const std::string& jit) {
  setenv("R_HOME", "/usr/lib/R", 1);
  setenv("R_ENABLE_JIT", jit.c_str(), 1);
  return "/usr/lib/R/bin/exec/R --no-echo --no-restore -e 'options(keep.source = TRUE); "
         "source(\"" +
         std::string(R_LINES_MAIN) + "\")' --args jit" + jit;
}

/// Where a stop left the R code: innermost function, its line and its locals.
struct RStop {
  std::string function;
  int line = 0;
  std::map<std::string, std::string> locals;
};

RStop where(Debugger& dbg, pid_t tid) {
  InterpMemory mem(dbg.target(tid));
  std::optional<RReader> r = RReader::find(dbg.modules(), mem);
  REQUIRE(r);
  std::vector<InterpFrame> st = r->stack(mem);
  REQUIRE(!st.empty());
  RStop s{st[0].function, st[0].line, {}};
  for (const InterpVariable& v : st[0].locals) s.locals[v.name] = v.value;
  return s;
}

}  // namespace

TEST_CASE("R line breakpoints: pending, bound, hit both ways, JIT off and on",
          "[interp][r][r-breakpoints][debug-registers]") {
  const int comment = line_of(R_LINES_HELPER, "# a comment line");
  const int square = line_of(R_LINES_HELPER, "square <- n * n");
  const int total = line_of(R_LINES_HELPER, "total <- square + 1");
  for (std::string jit : {"0", "3"}) {
    INFO("R_ENABLE_JIT=" << jit);
    Timeline tl(test::recorded_trace(REWIND_BIN, r_command(jit)));
    Debugger dbg(tl);
    BreakpointSpec spec;
    spec.line = uint32_t(comment);
    std::vector<Breakpoint> set = dbg.set_source_breakpoints(R_LINES_HELPER, {spec});
    REQUIRE(set.size() == 1);
    CHECK(set[0].addrs.empty());  // no R runs at the start of the recording
    CHECK(!set[0].message.empty());
    const int id = set[0].id;
    pid_t tid = 0;
    for (int n = 0; n < 3; ++n) {
      DebugStop d = dbg.resume(Direction::Forward);
      INFO("hit " << n);
      REQUIRE(d.stop.reason == StopReason::Breakpoint);
      CHECK(d.breakpoint_ids == std::vector<int>{id});
      tid = d.stop.tid;
      RStop s = where(dbg, tid);
      CHECK(s.function == "accumulate");
      CHECK(s.line == square);
      CHECK(s.locals["n"] == std::to_string(n) + "L");  // 0:4 is an integer vector
      CHECK(s.locals.count("square") == 0);             // the line has not run yet
    }
    // Bound on the next line with a statement, and said so.
    const Breakpoint* bp = dbg.breakpoint(id);
    REQUIRE(bp);
    CHECK(bp->line == uint32_t(square));
    CHECK(bp->message.empty());
    CHECK(bp->file == R_LINES_HELPER);
    // Back to the 2nd hit, then the 1st; then on to the start of the recording.
    for (int n : {1, 0}) {
      DebugStop d = dbg.resume(Direction::Backward);
      INFO("back to hit " << n);
      REQUIRE(d.stop.reason == StopReason::Breakpoint);
      RStop s = where(dbg, tid);
      CHECK(s.line == square);
      CHECK(s.locals["n"] == std::to_string(n) + "L");  // 0:4 is an integer vector
    }
    CHECK(dbg.resume(Direction::Backward).stop.reason == StopReason::TraceStart);

    // A condition in R and a logpoint, forwards from the start.
    BreakpointSpec log, cond;
    log.line = uint32_t(square);
    log.log_message = "n is {n}";
    cond.line = uint32_t(total);
    cond.condition = "n >= 2 && label == \"odd\"";
    set = dbg.set_source_breakpoints(R_LINES_HELPER, {log, cond});
    REQUIRE(set.size() == 2);
    DebugStop d = dbg.resume(Direction::Forward);
    REQUIRE(d.stop.reason == StopReason::Breakpoint);
    CHECK(d.breakpoint_ids == std::vector<int>{set[1].id});
    RStop s = where(dbg, d.stop.tid);
    CHECK(s.line == total);
    CHECK(s.locals["n"] == "3L");
    CHECK(s.locals["label"] == "\"odd\"");
    CHECK(s.locals["square"] == "9L");
    CHECK(d.log == std::vector<std::string>{"n is 0L", "n is 1L", "n is 2L", "n is 3L"});
    // To the end: the logpoint prints n = 4; back from there, the condition's last hit
    // (alone: each bound place, AST and byte code, takes a debug register going back).
    d = dbg.resume(Direction::Forward);
    CHECK(d.stop.reason != StopReason::Breakpoint);
    CHECK(d.log == std::vector<std::string>{"n is 4L"});
    set = dbg.set_source_breakpoints(R_LINES_HELPER, {cond});
    d = dbg.resume(Direction::Backward);
    REQUIRE(d.stop.reason == StopReason::Breakpoint);
    CHECK(where(dbg, d.stop.tid).locals["n"] == "3L");

    // The main script's top-level loop: bound as it runs (forwards from the last call),
    // then hit again going back (the call before). With the JIT on, R compiles a top-level
    // loop before running it, and its byte code is no function's: not covered here.
    if (jit != "0") continue;
    dbg.set_source_breakpoints(R_LINES_HELPER, {});
    const int call_line = line_of(R_LINES_MAIN, "value <- accumulate(n)  # call site");
    BreakpointSpec call;
    call.line = uint32_t(call_line);
    set = dbg.set_source_breakpoints(R_LINES_MAIN, {call});
    REQUIRE(set.size() == 1);
    d = dbg.resume(Direction::Forward);
    REQUIRE(d.stop.reason == StopReason::Breakpoint);
    CHECK(d.breakpoint_ids == std::vector<int>{set[0].id});
    RStop top = where(dbg, d.stop.tid);
    CHECK(top.line == call_line);  // in source()'s eval() of the loop
    CHECK(dbg.breakpoint(set[0].id)->line == uint32_t(call_line));
    d = dbg.resume(Direction::Backward);
    REQUIRE(d.stop.reason == StopReason::Breakpoint);
    CHECK(where(dbg, d.stop.tid).line == call_line);
  }
}

TEST_CASE("R function breakpoints by name: pending, bound, hit both ways, JIT off and on",
          "[interp][r][r-breakpoints][debug-registers]") {
  const int square = line_of(R_LINES_HELPER, "square <- n * n");
  const int acc = line_of(R_LINES_HELPER, "acc <- 0");
  for (std::string jit : {"0", "3"}) {
    INFO("R_ENABLE_JIT=" << jit);
    Timeline tl(test::recorded_trace(REWIND_BIN, r_command(jit)));
    Debugger dbg(tl);
    // An R function's name, and a function libR exports: that one stays native.
    BreakpointSpec r_fn, native;
    r_fn.function = "accumulate";
    native.function = "Rf_eval";
    std::vector<Breakpoint> set = dbg.set_function_breakpoints({r_fn, native});
    REQUIRE(set.size() == 2);
    CHECK(set[0].addrs.empty());  // no R runs at the start of the recording
    CHECK(set[0].message.find("R interpreter") != std::string::npos);
    // The native one stops first (R allocates long before it runs the script), in libR.
    DebugStop d = dbg.resume(Direction::Forward);
    REQUIRE(d.stop.reason == StopReason::Breakpoint);
    CHECK(d.breakpoint_ids == std::vector<int>{set[1].id});
    REQUIRE(!dbg.stack(d.stop.tid).empty());
    CHECK(dbg.stack(d.stop.tid)[0].function == "Rf_eval");
    set = dbg.set_function_breakpoints({r_fn});
    const int id = set[0].id;
    pid_t tid = 0;
    for (int n = 0; n < 3; ++n) {
      d = dbg.resume(Direction::Forward);
      INFO("call " << n);
      REQUIRE(d.stop.reason == StopReason::Breakpoint);
      CHECK(d.breakpoint_ids == std::vector<int>{id});
      tid = d.stop.tid;
      RStop s = where(dbg, tid);
      CHECK(s.function == "accumulate");
      CHECK(s.line == square);  // the body's first statement
      CHECK(s.locals["n"] == std::to_string(n) + "L");
      CHECK(s.locals.count("square") == 0);
    }
    {
      // Its code as the byte code view shows it: none with the JIT off, R's instructions
      // with the frame at the first of its first line with it on (compiled by its 3rd call).
      InterpMemory mem(dbg.target(tid));
      std::unique_ptr<Interpreter> in = find_r_interpreter(dbg.modules(), mem);
      REQUIRE(in);
      std::vector<InterpFrame> st = in->stack(mem, tid);
      REQUIRE(st.size() > 1);
      InterpCode code = in->code(mem, st[0]);
      CHECK(code.file == R_LINES_HELPER);
      if (jit == "0") {
        CHECK(code.instructions.empty());
        CHECK(code.note.find("not byte-compiled") != std::string::npos);
      } else {
        REQUIRE(code.instructions.size() > 5);
        REQUIRE(code.current);
        CHECK(*code.current == code.instructions[0].offset);
        CHECK(code.instructions[0].line == square);
        CHECK(code.instructions.back().opcode == "RETURN");
        // A caller's: at its call. source() calls withVisible() on each expression it reads.
        auto source = std::find_if(st.begin(), st.end(),
                                   [](const InterpFrame& f) { return f.function == "source"; });
        REQUIRE(source != st.end());
        InterpCode caller = in->code(mem, *source);
        REQUIRE(caller.current);
        auto at =
            std::find_if(caller.instructions.begin(), caller.instructions.end(),
                         [&](const InterpInstruction& i) { return i.offset == *caller.current; });
        REQUIRE(at != caller.instructions.end());
        CHECK(at->opcode == "CALL");
        CHECK(caller.file.empty());  // base R keeps no srcrefs
      }
    }
    const Breakpoint* bp = dbg.breakpoint(id);
    REQUIRE(bp);
    CHECK(bp->message.empty());
    CHECK(bp->file == R_LINES_HELPER);
    CHECK(bp->line == uint32_t(square));
    d = dbg.resume(Direction::Backward);
    REQUIRE(d.stop.reason == StopReason::Breakpoint);
    CHECK(d.breakpoint_ids == std::vector<int>{id});
    CHECK(where(dbg, tid).locals["n"] == "1L");

    // A condition in R; another function, whose first statement is `acc <- 0`.
    BreakpointSpec cond, churn;
    cond.function = "accumulate";
    cond.condition = "n == 4L";
    churn.function = "churn";
    set = dbg.set_function_breakpoints({cond, churn});
    REQUIRE(set.size() == 2);
    d = dbg.resume(Direction::Forward);
    REQUIRE(d.stop.reason == StopReason::Breakpoint);
    CHECK(d.breakpoint_ids == std::vector<int>{set[0].id});
    CHECK(where(dbg, d.stop.tid).locals["n"] == "4L");
    d = dbg.resume(Direction::Forward);
    REQUIRE(d.stop.reason == StopReason::Breakpoint);
    CHECK(d.breakpoint_ids == std::vector<int>{set[1].id});
    RStop s = where(dbg, d.stop.tid);
    CHECK(s.function == "churn");
    CHECK(s.line == acc);
    CHECK(s.locals["count"] == "60");  // churn(60): a double
    CHECK(dbg.resume(Direction::Forward).stop.reason != StopReason::Breakpoint);  // the end
  }
}
