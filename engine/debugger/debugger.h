// The source-level debugger over a timeline (DESIGN.md "Symbols and the source-level
// debugger"): what a DAP adapter calls. Breakpoints by line or function with conditions,
// hit counts and log messages; continue and line steps in both directions; stacks,
// variables and expressions at the current point; watch expressions as hardware
// watchpoints.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/debugger/breakpoint_refs.h"
#include "engine/debugger/line_stepper.h"
#include "engine/debugger/python_breakpoints.h"
#include "engine/debugger/python_exceptions.h"
#include "engine/debugger/python_locator.h"
#include "engine/debugger/r_breakpoints.h"
#include "engine/debugger/r_errors.h"
#include "engine/debugger/recording_exports.h"
#include "engine/debugger/source_breakpoints.h"
#include "engine/debugger/timeline_target.h"
#include "engine/interp/python/python_frames.h"
#include "engine/interp/r/r_frames.h"
#include "engine/interp/script_condition.h"
#include "engine/symbols/expression.h"

namespace rwd {

/// How a resume ended, with what logpoints printed on the way.
struct DebugStop {
  StopInfo stop;
  std::vector<int> breakpoint_ids;         ///< user breakpoints that caused the stop
  std::vector<std::string> log;            ///< logpoint messages, in order
  std::string error;                       ///< a condition that failed to evaluate (we stopped)
  std::optional<ExceptionStop> exception;  ///< a Python exception's or R error's stop
};

/// A data breakpoint made from an expression.
struct WatchInfo {
  uint64_t addr = 0;
  int len = 0;  ///< bytes: 1 to kMaxWatchBytes (past 8 or misaligned: a wide watch)
  std::string type;
  TypePtr value_type;  ///< the watched value's type (to show old and new values)
};

/// Checks that `len` bytes at `addr` can be watched: 1 to kMaxWatchBytes. Those that fit no
/// x86 debug register (1, 2, 4 or 8 bytes aligned to their size: Intel SDM vol. 3, "Debug
/// Registers") are wide watches, for writes only (Timeline::add_watchpoint). `what` names
/// the range in the Error thrown otherwise.
void check_watch_range(uint64_t addr, int len, const std::string& what);

/// What a hardware watchpoint on `v` covers (its address, size and type). `what` names it in
/// errors. Throws Error when `v` is not in memory (a register, a bitfield) or its range does
/// not pass check_watch_range().
WatchInfo watch_info(const Value& v, const std::string& what);

/// Which recorded signals stop a forward continue (DAP exception breakpoint filters).
/// A signal stops when `all` is set, when it is fatal and `fatal` is set, or when it is in
/// `signals`.
struct SignalStops {
  bool all = false;
  bool fatal = true;
  std::vector<int> signals;
  /// True when a signal `signo` (`fatal`: it ends the process) stops.
  bool stops(int signo, bool fatal) const;
};

/// One debugging session over a timeline. Not thread-safe: one caller at a time (the
/// timeline's interrupt() may be called from another thread to stop a resume).
class Debugger {
 public:
  explicit Debugger(Timeline& timeline);

  Timeline& timeline() { return tl_; }
  /// The modules at the current point (re-read after each stop).
  ModuleList& modules() { return modules_; }

  /// Replaces the breakpoints of one source file (DAP setBreakpoints) and returns them bound.
  /// In a Python file (.py), they are Python line breakpoints (python_breakpoints.h), in an R
  /// file (.R) R line breakpoints (r_breakpoints.h): their conditions in the script's
  /// language (script_condition.h), their log messages naming locals.
  std::vector<Breakpoint> set_source_breakpoints(const std::string& file,
                                                 std::vector<BreakpointSpec> specs);
  /// Replaces all function breakpoints (DAP setFunctionBreakpoints). In a recording of R, a
  /// syntactic R name that no mapped executable or library exports as a function
  /// ("accumulate", "my.fun"; not "Rf_eval", "malloc") is an R function, stopped at the
  /// first statement of its body (r_breakpoints.h). Else a dotted name
  /// ("helper.accumulate", "pkg.mod.Klass.method") is a Python function, stopped at the
  /// first line of its body (python_breakpoints.h); others are native.
  std::vector<Breakpoint> set_function_breakpoints(const std::vector<BreakpointSpec>& specs);
  /// The script language whose function `name` names, as set_function_breakpoints() decides
  /// it (an R name in a recording of R that no mapped file exports, then a dotted Python
  /// name); nullopt for a native function.
  std::optional<ScriptLanguage> function_language(const std::string& name);
  /// Replaces all instruction breakpoints (DAP setInstructionBreakpoints).
  std::vector<Breakpoint> set_instruction_breakpoints(const std::vector<BreakpointSpec>& specs);
  /// Binds the breakpoints in the code mapped at the current point too (libraries loaded
  /// since, another process's program), keeping where they were bound before; returns the
  /// ids bound in new places.
  std::vector<int> rebind_breakpoints();
  /// The breakpoints whose binding changed at the last stops (libraries mapped or unmapped),
  /// emptied by the call.
  std::vector<Breakpoint> take_rebound_breakpoints();
  /// The breakpoint with id `id`, nullptr when there is none.
  const Breakpoint* breakpoint(int id) const;
  /// Chooses which recorded signals stop a forward continue (default: fatal ones).
  void set_signal_stops(SignalStops stops) { signal_stops_ = std::move(stops); }
  /// Chooses which Python exceptions stop a continue, in both directions (default: none).
  void set_python_exception_stops(PythonExceptionStops stops) {
    exceptions_.set_stops(std::move(stops));
  }
  /// Chooses whether R errors stop a continue, in both directions (r_errors.h; default: no).
  void set_r_error_stops(bool on) { r_errors_.set_enabled(on); }

  /// Continue forwards or backwards to the next (previous) breakpoint whose condition and
  /// hit condition hold, watchpoint, signal, or the end (start) of the trace. Logpoints on
  /// the way add their message to `log` and do not stop. A write watchpoint stops only where
  /// the value changed (gdb's `watch`); a read/write one at every access. While a breakpoint
  /// is pending (its code not mapped yet), a forward run also pauses where new code is mapped
  /// (Timeline::set_stop_at_code_mappings) to bind it, so a hit in a library loaded during
  /// the run is not missed. Python exceptions and R errors stop as
  /// set_python_exception_stops() and set_r_error_stops() say (the stop then carries
  /// `exception`).
  /// With `only_tid`, the breakpoints and watchpoints other tasks meet do not stop it (DAP's
  /// singleThread: the other tasks run as recorded, as if held).
  DebugStop resume(Direction dir, pid_t only_tid = 0);
  /// A source line step of task `tid` (recorded tid).
  DebugStop step(pid_t tid, StepKind kind, Direction dir, bool single_thread = false);
  /// A step of task `tid` by lines of the Python code it runs (python_stepper.h), `python`
  /// being its process's interpreter. Throws Error when the task runs no Python frame.
  DebugStop step_python(pid_t tid, const PythonReader& python, StepKind kind, Direction dir);
  /// A step of task `tid` by lines of the R code it runs (r_stepper.h), `r` its R reader;
  /// throws Error as RStepper::step.
  DebugStop step_r(pid_t tid, const RReader& r, StepKind kind, Direction dir);
  /// One instruction of task `tid`; rewind's own code in the process counts as one
  /// (ProgramSteps).
  DebugStop step_instruction(pid_t tid, Direction dir);

  /// The call stack of task `tid` at the current point (cached until the timeline moves).
  const std::vector<StackFrame>& stack(pid_t tid);
  /// Variables of frame `frame` of task `tid`.
  FrameVariables& variables(pid_t tid);
  /// Evaluates an expression in a frame of a task. Throws ExpressionError.
  Value evaluate(pid_t tid, size_t frame, const std::string& expr);
  /// Forgets what was read at this point (after memory was changed in a diversion).
  void refresh() { moved(); }
  /// Sets every breakpoint's hit count (for hit conditions) back to 0, as when the program
  /// starts again (DAP restart).
  void reset_hit_counts() {
    for (auto& [id, bp] : breakpoints_) bp.hits = 0;
    python_.reset_hit_counts();
    r_breakpoints_.reset_hit_counts();
  }
  /// The target through which task `tid`'s values are read.
  Target& target(pid_t tid);

  /// Resolves an expression to what a hardware watchpoint can watch (DAP dataBreakpointInfo):
  /// an lvalue in memory of 1, 2, 4 or 8 bytes, aligned. Throws Error with the reason
  /// otherwise.
  WatchInfo watchable(pid_t tid, size_t frame, const std::string& expr);
  /// Turns an expression into a hardware watchpoint (DAP data breakpoint). Throws Error with
  /// the reason when it cannot be watched or all debug registers are in use.
  WatchInfo watch(pid_t tid, size_t frame, const std::string& expr, WatchKind kind);
  /// Watches `w` (as watchable() returned it). Throws Error when no debug register is free.
  void watch(const WatchInfo& w, WatchKind kind);
  void unwatch(const WatchInfo& w, WatchKind kind);
  /// Whether the user watches writes of `len` bytes at `addr` (watch()).
  bool watching(uint64_t addr, int len) const;
  /// Takes the user's watchpoints, except a write watch of `len` bytes at `keep`, off the
  /// timeline (their debug registers become free) until restore_watches(): for a search that
  /// stops only at one value's writes (previous/next change), even when data breakpoints
  /// hold all four registers. The user's list is unchanged.
  void set_watches_aside(uint64_t keep, int len);
  /// Puts back what set_watches_aside() took off.
  void restore_watches();
  /// Puts a breakpoint of the caller's at `addr` in task `tid`'s process and makes resume()
  /// return each stop there (reason Breakpoint, with the ids of user breakpoints at the same
  /// place, if any), as a query's own breakpoint (R's Rf_endcontext, for returns). Throws
  /// Error when `addr` is in no mapped code.
  void report_stops_at(pid_t tid, uint64_t addr);
  /// Takes report_stops_at's breakpoint at `addr` away.
  void stop_reporting(uint64_t addr);
  /// Whether a user breakpoint is armed at code site `site`.
  bool has_breakpoint_site(const CodeSite& site) const;
  /// A logpoint's message for task `tid` at the current point: each "{expr}" replaced by
  /// the expression's value in frame 0 (VS Code's logpoint syntax), or by "<error>".
  std::string format_log(pid_t tid, const std::string& message);

  /// Why Python and R breakpoints (and the queries made of them) cannot stop on this
  /// machine, or "" where they can: they watch the interpreter read its code, and where the
  /// CPU's debug registers do not serve programs (hardware_debug_registers(): a
  /// paravirtualised guest) only writes can be watched.
  static std::string script_breakpoints_refusal();

 private:
  struct TaskView {
    std::unique_ptr<TimelineTarget> target;
    std::vector<StackFrame> frames;
    std::unique_ptr<FrameVariables> vars;
    bool stack_read = false;
  };
  void moved();
  /// Removes the breakpoints `replaced` selects and adds, binds and arms `specs` (a DAP
  /// set*Breakpoints request replaces a whole group). Throws Error on a malformed condition.
  std::vector<Breakpoint> replace_breakpoints(
      const std::function<bool(const Breakpoint&)>& replaced,
      const std::vector<BreakpointSpec>& specs);
  /// A script breakpoint for `spec` with the next id, not bound yet. Throws Error on a
  /// malformed condition (in `lang`'s syntax) or hit condition.
  Breakpoint new_script_breakpoint(const BreakpointSpec& spec, ScriptLanguage lang);
  /// Gives each of `bps` script_breakpoints_refusal() as its message (unverified, bound
  /// nowhere) and returns true where that is not empty; false where they can stop.
  static bool refuse_script_breakpoints(std::vector<Breakpoint>& bps);
  /// Binds `bp` (addrs, line, file, message, sites; see source_breakpoints.h): its sites in
  /// every ELF file of the trace (an instruction breakpoint's: the code at its address
  /// here), its addresses where the current process, whose mappings are `maps`, has them.
  void bind(Breakpoint& bp, const std::vector<ProcMapping>& maps);
  /// The current task's process's mappings; none when no task is left.
  std::vector<ProcMapping> current_mappings();
  /// Adds every ELF file the trace saved (its files/ directory: each program and library
  /// mapped by any process) to seen_, once.
  void load_trace_modules();
  /// The user breakpoints at `addr` whose conditions hold for `tid` (counting hits);
  /// logpoints append to `log` and are not returned.
  std::vector<int> hits_at(pid_t tid, uint64_t addr, std::vector<std::string>& log,
                           std::string& error, bool count);
  /// The user breakpoints bound where breakpoint stop `s` is (whatever their conditions);
  /// none for a stop of another kind.
  std::vector<int> breakpoints_at(const StopInfo& s);
  /// Whether a step of `tid` that reaches `addr` stops there: a user breakpoint whose
  /// condition holds (its hit counted), or one whose condition cannot be evaluated.
  bool stops_step(pid_t tid, uint64_t addr);
  /// A step's stop `s` as reported (the breakpoints at it), after forgetting what was read.
  DebugStop step_stop(const StopInfo& s);
  /// A script line step (`step`, Python's or R's) as reported by step_stop; forgets what was
  /// read when it throws too.
  DebugStop script_step(const std::function<StopInfo()>& step);
  TaskView& view(pid_t tid);

  Timeline& tl_;
  ModuleList modules_;
  BreakpointRefs refs_;
  ProgramSteps steps_;
  LineStepper stepper_;
  std::map<int, Breakpoint> breakpoints_;
  PythonLocator locator_;
  PythonBreakpoints python_;
  PythonExceptions exceptions_;
  RErrors r_errors_;
  RBreakpoints r_breakpoints_;
  RecordingExports exports_;
  int next_id_ = 1;
  std::map<pid_t, TaskView> views_;
  std::map<uint64_t, std::pair<WatchKind, int>> watches_;  ///< kind and bytes, by address
  std::map<uint64_t, CodeSite> reported_;  ///< report_stops_at's, by runtime address
  std::vector<std::pair<uint64_t, std::pair<WatchKind, int>>> set_aside_;  ///< off the timeline
  SignalStops signal_stops_;
  std::vector<int> rebound_;  ///< ids whose binding changed since take_rebound_breakpoints()
  /// Every module seen in any process so far and every ELF file of the trace (one per file).
  std::vector<std::shared_ptr<Module>> seen_;
  bool trace_modules_loaded_ = false;
  /// The modules (file, runtime start) the breakpoints were last bound in.
  std::vector<std::pair<std::string, uint64_t>> loaded_;
  bool code_mapping_stops_ = false;  ///< what the timeline was last told
};

}  // namespace rwd
