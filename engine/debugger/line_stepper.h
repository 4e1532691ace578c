// Source-level stepping on a timeline, forwards and backwards, as gdb does it: next (over
// calls), step (into functions with line information), finish (out), and their reverse
// forms. A step stops at the first instruction of an is_stmt line-table row of a different
// line in the same frame (or in the caller after a return); backward steps stop where the
// forward step would have stopped, so reverse-next retraces next exactly.
#pragma once

#include <sys/types.h>

#include <functional>

#include "engine/debugger/breakpoint_refs.h"
#include "engine/debugger/program_steps.h"
#include "engine/symbols/module_list.h"
#include "engine/timeline/timeline.h"

namespace rwd {

/// Which way to move.
enum class Direction : uint8_t { Forward, Backward };

/// Kinds of source step.
enum class StepKind : uint8_t {
  Over,  ///< next: the next line of this function, calls run to completion
  Into,  ///< step: like Over, but stops in a called function that has line information
  Out,   ///< finish: to the caller, just after the call returns (backward: at the call)
};

/// Steps one task of a timeline by source lines.
class LineStepper {
 public:
  /// `user_breakpoint` says whether a user breakpoint (whose condition holds) is at an
  /// address for a task; a step that reaches one stops there, as gdb's do. Instructions are
  /// stepped through `steps` (rewind's own code in the process is one instruction).
  LineStepper(Timeline& timeline, ModuleList& modules, BreakpointRefs& breakpoints,
              ProgramSteps& steps, std::function<bool(pid_t, uint64_t)> user_breakpoint)
      : tl_(timeline),
        modules_(modules),
        bps_(breakpoints),
        steps_(steps),
        user_bp_(std::move(user_breakpoint)) {}

  /// Performs the step for task `tid` (a recorded tid). Returns the timeline's stop: reason
  /// Step when the step completed, or whatever ended it early (a breakpoint, a signal, the
  /// start or end of the trace). With `single_thread` (DAP's singleThread), only `tid`'s
  /// breakpoints end it early: the other tasks still run as recorded (a replay cannot hold
  /// them), but as if stopped, their breakpoints do not interrupt the step.
  StopInfo step(pid_t tid, StepKind kind, Direction dir, bool single_thread = false);

 private:
  struct Frame {
    uint64_t pc = 0, cfa = 0, entry = 0;  ///< entry: the function's first address (0: none)
    bool has_lines = false;               ///< the pc has DWARF line information
  };
  Frame frame_of(pid_t tid);
  /// Line of `pc` if it is the first address of an is_stmt row (0 otherwise), and the
  /// line of the row holding `pc` in `line`.
  uint32_t row_start_line(uint64_t pc, uint32_t* line);
  StopInfo finish(pid_t tid, Direction dir, const Frame& f);
  StopInfo back_over_callee(pid_t tid, const Frame& callee);
  /// Steps task `tid` backwards to `pc` in `frame` (a point it passed since), back over the
  /// calls made on the way.
  StopInfo back_to(pid_t tid, uint64_t pc, const Frame& frame);
  StopInfo step_forward(pid_t tid, StepKind kind);
  StopInfo step_backward(pid_t tid, StepKind kind);
  bool done(const StopInfo& s) const { return s.reason != StopReason::Step; }
  /// The current point reported as a stop at the user breakpoint at `pc` (a step reached it).
  StopInfo breakpoint_stop(pid_t tid, uint64_t pc);
  /// A user breakpoint met at `pc` during a line step, from a line `from_line`: reported as
  /// the step's own end (StopReason::Step) when `pc` starts a statement of another line, where
  /// the step stops anyway (so a client says "paused on step" after stepping onto a
  /// breakpoint's line, either way), else as a breakpoint hit.
  StopInfo stop_at_user_breakpoint(pid_t tid, uint64_t pc, uint32_t from_line);
  /// Whether a user breakpoint at `addr` stops task `tid` during this step (see step()).
  bool user_breakpoint(pid_t tid, uint64_t addr) {
    return (only_tid_ == 0 || tid == only_tid_) && user_bp_(tid, addr);
  }

  Timeline& tl_;
  ModuleList& modules_;
  BreakpointRefs& bps_;
  ProgramSteps& steps_;
  std::function<bool(pid_t, uint64_t)> user_bp_;
  pid_t only_tid_ = 0;  ///< the stepping task when only its breakpoints count (0: any task's)
};

}  // namespace rwd
