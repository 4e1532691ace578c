// Stepping by lines of the R script a replayed GNU R runs (DAP next, stepIn, stepOut and
// stepBack, rewind/stepInBack and rewind/stepOutBack at an R frame), forwards and backwards,
// for AST-interpreted and byte-compiled closures (R's JIT on or off). R marks where code
// starts in two kinds of word, which write watchpoints follow:
// - R_Srcref, which the AST evaluator sets before each statement of a `{` (do_begin in
//   src/main/eval.c), and also as a closure starts and returns and as bcEval starts and ends
//   (RReader::starts_statement tells those apart);
// - a byte-compiled frame's `currentpc`, a local of its bcEval that NEXT() sets at the start
//   of every instruction, and whose address R_BCpc holds while that bcEval runs.
// R_GlobalContext, written as each call's context is pushed and popped, shows calls and
// returns. A line step is a run to the first start of code on another line of the frame, as
// gdb's next is for machine code.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "engine/debugger/line_stepper.h"
#include "engine/interp/r/r_frames.h"
#include "engine/timeline/timeline.h"

namespace rwd {

class StepWatches;  // step_watches.h

/// Steps one task of a timeline by R lines.
class RStepper {
 public:
  /// `user_breakpoint` says whether a user breakpoint (whose condition holds) is at an
  /// address for a task: a step that reaches one stops there.
  RStepper(Timeline& timeline, const RReader& r,
           std::function<bool(pid_t, uint64_t)> user_breakpoint)
      : tl_(timeline), r_(r), g_(r.step_globals()), user_bp_(std::move(user_breakpoint)) {}

  /// Steps task `tid` (a recorded tid) whose innermost R frame has a line. Forward: Over
  /// stops at the first statement (AST) or instruction (byte code) of the frame on another
  /// line, or in the caller once the frame returns (on the line of the call); Into also stops
  /// at the first line of an R function with source that it calls, directly or through
  /// functions without source (lapply's FUN); Out stops in the caller after the return.
  /// Backward: Over stops at the start of the previous line of the frame (calls on it are
  /// stepped over), or on the call in the caller from the frame's first line; Into instead
  /// enters the last function with source that returned into the frame on the way, at the
  /// start of its last line (gdb's reverse-step); Out stops on the call in the caller.
  /// Returns a stop with reason Step when the step completed, or whatever ended it early (a
  /// user breakpoint, a signal, either end of the trace). Throws Error when the task's
  /// innermost R frame has no line, R's globals are not known, or no debug register is free.
  StopInfo step(pid_t tid, StepKind kind, Direction dir);

 private:
  std::vector<InterpFrame> stack(pid_t tid);
  RReader::ContextInfo context(pid_t tid, uint64_t ctx);
  /// Which frame of `st` (an index) watchpoint stop `s` starts code in: R_Srcref set for a
  /// statement of the innermost frame, or a byte-compiled frame's pc word; -1 for neither.
  int started_frame(const StopInfo& s, const std::vector<InterpFrame>& st, pid_t tid);
  bool ends_step(const StopInfo& s, const StepWatches& w) const;
  StopInfo forward(pid_t tid, StepKind kind, const std::vector<InterpFrame>& start);
  StopInfo backward(pid_t tid, StepKind kind, std::vector<InterpFrame> start);
  /// The context change of stop `s` (a write of R_GlobalContext) when it is a call's return
  /// (the old value a function context whose next is the new one), else all false.
  RReader::ContextInfo popped_call(pid_t tid, const StopInfo& s);
  /// Runs the timeline in `dir` watching only `words` (`w`'s set aside, put back after) until
  /// `arrived` holds for a stop of task `tid` at one of them: nullopt then, or the stop that
  /// ended the run first (a user breakpoint, either end of the trace).
  std::optional<StopInfo> run_watching(pid_t tid, StepWatches& w,
                                       const std::vector<uint64_t>& words, Direction dir,
                                       const std::function<bool(const StopInfo&)>& arrived);
  /// Forward to the next start of code in frame `frame` (context address) at stack depth
  /// `depth`, on line `line` (any line: 0), watching `w`'s words.
  StopInfo forward_to_start(pid_t tid, const StepWatches& w, uint64_t frame, size_t depth,
                            int line);
  /// Back to where the call whose context is `ctx` began (Rf_begincontext setting its
  /// callflag), in one reverse stop instead of one per start of code and context change in
  /// the call (a JIT compilation is thousands): `w`'s words are set aside meanwhile. Returns
  /// the stop when something else ended the run first (a user breakpoint, the start of the
  /// trace), nullopt when it got there.
  std::optional<StopInfo> back_to_push(pid_t tid, uint64_t ctx, StepWatches& w);
  /// Forward to the end of the call whose context is `ctx` (R_execClosure setting its
  /// returnValue), in one stop, `w`'s words set aside meanwhile; a call unwound by an error
  /// ends where its context's memory is next used for another call. Returns as back_to_push.
  std::optional<StopInfo> forward_over_call(pid_t tid, uint64_t ctx, StepWatches& w);
  /// A backward Into that met the return of context `callee` (stack depth `depth`) into the
  /// stepping frame: back to the start of the callee's last line.
  StopInfo back_into_callee(pid_t tid, uint64_t callee, size_t depth);

  Timeline& tl_;
  const RReader& r_;
  RReader::StepGlobals g_;
  std::function<bool(pid_t, uint64_t)> user_bp_;
};

}  // namespace rwd
