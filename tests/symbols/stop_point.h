// A program stopped at stop_here(tag), live under ptrace or inside a replay, with its call
// stack and variables read through the same Target interface: the symbol tests run the same
// checks on both.
#pragma once

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "engine/debugger/timeline_target.h"
#include "engine/symbols/expression.h"
#include "engine/symbols/variables.h"
#include "tests/support/recorded_trace.h"
#include "tests/support/source_line.h"
#include "tests/symbols/live_process.h"

namespace test {

/// Runtime address of function `name` in the program's executable (from rewind's own
/// symbol table).
inline uint64_t function_address(rwd::ModuleList& modules, const std::string& name) {
  rwd::Module* exe = modules.executable();
  REQUIRE(exe != nullptr);
  auto syms = exe->symbols().lookup(name);
  REQUIRE(!syms.empty());
  return exe->to_runtime(syms.front()->addr);
}

/// A stopped program: its target, modules, stack and variables.
struct Stop {
  rwd::Target* target = nullptr;
  pid_t tid = 0;
  rwd::ModuleList modules;
  std::vector<rwd::StackFrame> frames;
  std::unique_ptr<rwd::FrameVariables> vars;

  /// Re-reads modules, the stack and variables after the program moved.
  void refresh() {
    modules.refresh(*target);
    frames = rwd::build_call_stack(*target, modules, tid);
    vars = std::make_unique<rwd::FrameVariables>(*target, modules, frames);
  }
  /// The value of variable `name` in frame `frame`, formatted; "<missing>" when absent.
  std::string var(size_t frame, const std::string& name) {
    auto v = vars->lookup(frame, name);
    return v ? rwd::format_value(v->value, *target, rwd::symbolizing_options(modules))
             : "<missing>";
  }
  /// An expression's value in frame `frame`, or "error: MESSAGE".
  std::string eval(size_t frame, const std::string& expr) {
    try {
      return rwd::format_value(rwd::evaluate_expression(expr, *target, *vars, frame), *target,
                               rwd::symbolizing_options(modules));
    } catch (const rwd::ExpressionError& e) {
      return std::string("error: ") + e.what();
    }
  }
  /// Index of the first frame of function `fn`, or -1.
  int frame_of(const std::string& fn) const {
    for (size_t i = 0; i < frames.size(); ++i)
      if (frames[i].function == fn) return int(i);
    return -1;
  }
};

/// `program` run live under ptrace to the entry of `function` (stop_here by default) called
/// with `tag` as its first integer argument.
struct LiveStop : Stop {
  LiveProcess process;
  rwd::PtraceTarget ptrace_target;
  LiveStop(const std::string& program, int tag, const std::string& function = "stop_here")
      : process(program), ptrace_target(process.pid()) {
    target = &ptrace_target;
    tid = process.pid();
    modules.refresh(*target);
    REQUIRE(process.run_to(function_address(modules, function), uint64_t(tag)));
    refresh();
  }
};

/// `program` recorded, then replayed on a timeline to the same stop as LiveStop.
struct ReplayStop : Stop {
  std::unique_ptr<rwd::Timeline> timeline;
  std::unique_ptr<rwd::TimelineTarget> replay_target;
  ReplayStop(const std::string& program, int tag, const std::string& function = "stop_here") {
    timeline = std::make_unique<rwd::Timeline>(recorded_trace(REWIND_BIN, program));
    tid = timeline->current().tid;
    replay_target = std::make_unique<rwd::TimelineTarget>(*timeline, tid);
    target = replay_target.get();
    modules.refresh(*target);
    uint64_t bp = function_address(modules, function);
    timeline->add_breakpoint(timeline->code_site(timeline->current().tid, bp));
    for (;;) {
      rwd::StopInfo s = timeline->resume_forward();
      REQUIRE(s.reason == rwd::StopReason::Breakpoint);
      if ((timeline->registers(tid).rdi & 0xffffffff) == uint64_t(tag)) break;
    }
    timeline->remove_breakpoint(timeline->code_site(timeline->current().tid, bp));
    refresh();
  }
};

}  // namespace test
