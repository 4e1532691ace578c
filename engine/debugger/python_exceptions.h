// Stops at Python exceptions in a replayed CPython 3.11-3.14, forwards and backwards (DAP
// exception filters "python-raised" and "python-uncaught"), with no help from the
// interpreter.
//
// The eval loop calls PyTraceBack_Here(frame) each time an exception enters a Python frame:
// in the frame that raised it, then in each caller it propagates through (the `error:` label
// of Python/ceval.c). A call is the raise itself when the exception has no traceback yet (a
// new exception, raised by a `raise` statement or by C code the frame called), or when the
// frame's instruction is RAISE_VARARGS (a `raise` of an exception object caught before). The
// stop is at the return of that call, back in the frame that raised: its Python frame is the
// top of the stack, at the raising line, with the exception set and its traceback started.
//
// An exception ends its thread or the program unhandled when the interpreter prints it as such:
// _PyErr_Display(file, type, value, traceback) is what sys.excepthook (the main thread) and
// threading.excepthook (other threads) call (unexported in 3.14: found from PyErr_Display). Its
// traceback's innermost entry names the frame object the exception was raised in; the stop for it
// is the raise, found by going back from there to that frame's raise. A forward continue does that
// only when the raise comes after where the continue began (the exception was not propagating or
// handled there, in any thread); otherwise it stops where the exception is reported (unless the
// continue began at that raise). Breakpoints between the raise and the report are passed over in
// that move back, and a forward continue meets them before the report.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/arch/registers.h"
#include "engine/debugger/breakpoint_refs.h"
#include "engine/debugger/exception_stop.h"
#include "engine/debugger/line_stepper.h"
#include "engine/debugger/python_locator.h"
#include "engine/interp/interp_frame.h"
#include "engine/timeline/timeline.h"

namespace rwd {

/// Which Python exceptions stop a continue.
struct PythonExceptionStops {
  /// Every raise in the program's own code: a frame whose file is not the interpreter's
  /// (the standard library, site-packages, dist-packages, frozen modules), as debugpy's
  /// justMyCode draws the line.
  bool raised = false;
  /// The raise of each exception that ends a thread or the program unhandled.
  bool uncaught = false;
  /// `raised`: only exceptions of these type names ("ValueError"; empty: any).
  std::vector<std::string> types;
};

/// The exception stops of one debugging session.
class PythonExceptions {
 public:
  /// `python`: the debugger's interpreter finder; `refs`: where its breakpoints are planted.
  PythonExceptions(Timeline& timeline, PythonLocator& python, BreakpointRefs& refs)
      : tl_(timeline), python_(python), refs_(refs) {}
  ~PythonExceptions() { end_resume(); }
  PythonExceptions(const PythonExceptions&) = delete;
  PythonExceptions& operator=(const PythonExceptions&) = delete;

  /// Which exceptions stop the next resumes (default: none).
  void set_stops(PythonExceptionStops stops) { stops_ = std::move(stops); }
  /// What set_stops() set.
  const PythonExceptionStops& stops() const { return stops_; }

  /// A Debugger::resume in direction `dir` begins. Backwards, the exception the current task
  /// is propagating or handling (or, at the report of an uncaught one, that one) makes its
  /// raise a stop even when no filter would stop there.
  void begin_resume(Direction dir);
  /// Before each run of the resume: plants the breakpoints once the interpreter is found.
  void prepare();
  /// Whether a forward run should pause where code is mapped: exceptions stop and the
  /// interpreter is not found yet (libpython3.N.so loads after the program starts).
  /// Only when the trace saved a Python interpreter (a program does not pause at each library
  /// it maps because VS Code turns python-uncaught on by default).
  bool waits_for_interpreter() {
    return dir_ == Direction::Forward && (stops_.raised || stops_.uncaught) && trace_has_python() &&
           !python_.reader();
  }
  void end_resume();

  /// Whether `s` is a stop at one of this class's breakpoints.
  bool owns(const StopInfo& s) const {
    return s.reason == StopReason::Breakpoint && s.addr &&
           (s.addr == traceback_here_ || s.addr == display_);
  }
  /// What a stop owns() accepted came to.
  struct Outcome {
    bool stop = false;  ///< report `at` (with `exception` when it is one)
    StopInfo at;
    std::optional<ExceptionStop> exception;
  };
  /// Handles stop `s` of a run going `dir`; may move the timeline (to the return into the
  /// raising frame, or back to an uncaught exception's raise). With stop false, the run goes
  /// on from where it is.
  Outcome on_stop(const StopInfo& s, Direction dir);

 private:
  /// Whether the trace saved a CPython program or library (python3.N-K, libpython3.N.so-K in
  /// its files/ directory: every ELF file any recorded process mapped).
  bool trace_has_python();
  /// Plants a breakpoint at function `name` of the interpreter, setting `at` to its address
  /// (nothing when `at` is set already or the function is not found).
  void plant(const char* name, uint64_t& at);
  /// plant() at runtime address `a` (nothing when 0).
  void plant_at(uint64_t a, uint64_t& at);
  /// A raise seen: task and the raising frame object.
  struct Raise {
    pid_t tid = 0;
    uint64_t frame_object = 0;
    auto operator<=>(const Raise&) const = default;
  };
  /// The thread state of task `tid` (PythonReader::thread_state, remembered). Throws
  /// InterpReadError.
  uint64_t thread_state(InterpMemory& mem, const PythonReader& py, pid_t tid);
  /// The raises of the exceptions task `tid` is propagating (first) or handling (innermost
  /// handler first) here, nullopt for one whose traceback is not started; empty when none
  /// or unreadable.
  std::vector<std::optional<Raise>> raises_in_flight(pid_t tid);
  /// The raises of the exceptions every task is propagating or handling here.
  std::set<Raise> exceptions_in_flight();
  /// A PyTraceBack_Here call that is a raise: the thread state, the raising frame (a
  /// _PyInterpreterFrame) and its instruction.
  struct RaiseCall {
    uint64_t tstate = 0, frame = 0, instr = 0;
  };
  /// The PyTraceBack_Here call of task `tid` for `frame_object` (its rdi) when it is a raise;
  /// nullopt for propagation (or what cannot be read).
  std::optional<RaiseCall> raise_call(InterpMemory& mem, const PythonReader& py, pid_t tid,
                                      uint64_t frame_object);
  /// Whether the `raised` filter stops at raise `c` (its frame's file, its type).
  bool wanted(InterpMemory& mem, const PythonReader& py, const RaiseCall& c);
  /// The exception of raise `c`, with where it was raised; nullopt when unreadable.
  std::optional<ExceptionStop> describe(InterpMemory& mem, const PythonReader& py,
                                        const RaiseCall& c);
  /// From the PyTraceBack_Here call `s` stands at, forwards to its return into the raising
  /// frame; the stop reached (a signal or the end when one comes first).
  StopInfo land(const StopInfo& s);
  /// Backwards from where the timeline stands to the raise `r` (its PyTraceBack_Here call,
  /// not landed); what else ended the run (the start of the trace, an interrupt) otherwise.
  StopInfo back_to(const Raise& r);
  /// Whether `s` is a stop at raise `r`'s PyTraceBack_Here call.
  bool is_raise(const StopInfo& s, const Raise& r);
  /// Remembers a stop reported for an exception raised at `raise`: at the raise (a reverse
  /// run from it leaves out the raise it stands at), or at its `report` (a reverse run from
  /// it goes to the raise).
  void note_stop(const StopInfo& s, std::optional<Raise> raise, bool report);
  /// Whether the timeline stands where note_stop() left it.
  bool at_noted();

  Timeline& tl_;
  PythonLocator& python_;
  BreakpointRefs& refs_;
  PythonExceptionStops stops_;
  uint64_t traceback_here_ = 0;  ///< PyTraceBack_Here while its breakpoint is planted
  uint64_t display_ = 0;         ///< _PyErr_Display while its breakpoint is planted
  /// How display_'s arguments are laid out: _PyErr_Display(file, type, value, traceback),
  /// PyErr_Display(unused, value, traceback), or an unnamed function found from PyErr_Display
  /// (either, told apart at each stop).
  enum class DisplayArgs { FileTypeValueTraceback, UnusedValueTraceback, Unknown };
  DisplayArgs display_args_ = DisplayArgs::FileTypeValueTraceback;
  std::vector<CodeSite> planted_;
  std::map<pid_t, uint64_t> tstates_;  ///< thread states by task, as last found
  std::optional<bool> has_python_;     ///< trace_has_python(), once known
  // The resume in progress.
  Direction dir_ = Direction::Forward;
  /// forwards: the raises of the exceptions in flight where the continue began
  std::set<Raise> in_flight_;
  std::optional<Raise> target_;  ///< backwards: a raise to stop at whatever the filters say
  /// forwards, from a stop at a raise: that raise (the continue passes its report quietly).
  std::optional<Raise> passing_;
  pid_t skip_tid_ = 0;  ///< backwards: the next raise met on this task is the stop's own
  /// The last exception stop reported, with the task's registers there.
  struct Noted {
    StopInfo at;
    Registers regs;
    std::optional<Raise> raise;
    bool report = false;  ///< at the report of `raise`, not the raise
  };
  std::optional<Noted> noted_;
};

}  // namespace rwd
