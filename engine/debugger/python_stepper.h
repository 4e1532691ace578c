// Stepping by lines of the Python script a replayed CPython runs (DAP next, stepIn, stepOut
// and stepBack at a Python frame), forwards and backwards. CPython 3.11-3.14 stores the
// frame's instruction pointer (prev_instr, 3.13: instr_ptr) at the start of every bytecode
// instruction it runs in that frame (INSTRUCTION_START in Python/ceval_macros.h), so a write
// watchpoint on that word of the current frame and one on its caller's see every instruction
// of those two frames and nothing of the functions they call: a line step is a run to the
// first such write that lands on another line, as gdb's next is for machine code.
#pragma once

#include <sys/types.h>

#include <functional>
#include <utility>
#include <vector>

#include "engine/debugger/line_stepper.h"
#include "engine/interp/python/python_frames.h"
#include "engine/timeline/timeline.h"

namespace rwd {

class StepWatches;  // step_watches.h

/// Steps one task of a timeline by Python lines.
class PythonStepper {
 public:
  /// `user_breakpoint` says whether a user breakpoint (whose condition holds) is at an
  /// address for a task: a step that reaches one stops there.
  PythonStepper(Timeline& timeline, const PythonReader& python,
                std::function<bool(pid_t, uint64_t)> user_breakpoint)
      : tl_(timeline), py_(python), user_bp_(std::move(user_breakpoint)) {}

  /// Steps task `tid` (a recorded tid) whose innermost Python frame is running (the task is
  /// in the eval loop). Forward: Over stops at the next line of the frame, or in the caller
  /// once it returns; Into also stops in a Python function it calls (at its `def` line;
  /// calls made through C code, such as a key function of sorted(), are stepped over); Out
  /// stops in the caller after the return. Backward: Over stops at the start of the previous
  /// line of the frame (calls on it are stepped over), or at the call in the caller from the
  /// frame's first line; Into instead enters the last Python function that returned into the
  /// frame on the way (a call on this line or the previous one), at the start of its last
  /// line, as gdb's reverse-step does; Out stops at the call in the caller. Returns a stop
  /// with reason Step when the step completed, or whatever ended it early (a user breakpoint,
  /// a signal, either end of the trace). Throws Error when the task runs no Python frame or
  /// no debug register is free for the watchpoints.
  StopInfo step(pid_t tid, StepKind kind, Direction dir);

 private:
  std::vector<InterpFrame> stack(pid_t tid);
  /// The word holding the current frame of the thread of `tid`, and the frame it holds
  /// (pushed, maybe not started); {0, 0} when it cannot be read.
  std::pair<uint64_t, uint64_t> current_frame(pid_t tid);
  /// Whether stop `s` ends the step early (a user breakpoint or watchpoint, a signal, either
  /// end of the trace); the step's own watchpoint hits on `words` and code-mapping stops
  /// do not.
  bool ends_step(const StopInfo& s, const std::vector<uint64_t>& words) const;
  StopInfo forward(pid_t tid, StepKind kind, const std::vector<InterpFrame>& start);
  StopInfo backward(pid_t tid, StepKind kind, const std::vector<InterpFrame>& start);
  /// A backward Into that met the return of frame `callee` (at stack depth `depth`) into
  /// the stepping frame: back to the start of the callee's last line, watching its
  /// instruction word in `w` too.
  StopInfo back_into_callee(pid_t tid, uint64_t callee, size_t depth, StepWatches& w);

  Timeline& tl_;
  const PythonReader& py_;
  std::function<bool(pid_t, uint64_t)> user_bp_;
};

}  // namespace rwd
