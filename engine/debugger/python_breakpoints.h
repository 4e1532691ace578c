// Breakpoints on lines of Python source files (DAP setBreakpoints for a .py file) in a replayed
// CPython 3.11-3.14, forwards and backwards, with no help from the interpreter.
//
// A line is bound to the instructions where its runs of bytecode begin, in every code object
// of that file rewind has seen (python_code.h). The eval loop fetches each instruction's
// 2-byte code unit before it runs it (NEXTOPARG in Python/ceval_macros.h), so a read
// watchpoint (a debug register, ReadWrite) on that unit sees each execution of the line
// start, and nothing of other lines. A hit counts when the fetch is the eval loop's, for the
// frame running that code object, and not from within the instruction itself (specializing
// rewrites it then); the stop is then moved forward to where the frame's instruction pointer
// names the line (python_stepper.h's step word), where the Python stack shows it.
//
// Code objects are found when a breakpoint is set: on the stacks of every task, and, for one
// still unbound, in the function objects alive there (the collector's lists: modules imported
// before the current point); and, during forward runs, at each PyEval_EvalCode call (a
// module's body, run by import or as the main script, and exec()) in a file with breakpoints:
// its code object and those nested in it (every function and class body of the module). Code
// freed before the current point (a module's top-level code once imported) is not known.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/debugger/breakpoint_refs.h"
#include "engine/debugger/line_stepper.h"
#include "engine/debugger/python_locator.h"
#include "engine/debugger/source_breakpoints.h"
#include "engine/interp/python/python_code.h"
#include "engine/interp/python/python_frames.h"

namespace rwd {

/// The Python line breakpoints of one debugging session.
class PythonBreakpoints {
 public:
  /// `python`: the debugger's interpreter finder.
  PythonBreakpoints(Timeline& timeline, PythonLocator& python, BreakpointRefs& refs)
      : tl_(timeline), python_(python), refs_(refs) {}
  ~PythonBreakpoints() { end_resume(); }
  PythonBreakpoints(const PythonBreakpoints&) = delete;
  PythonBreakpoints& operator=(const PythonBreakpoints&) = delete;

  /// Whether breakpoints in `path` are Python line breakpoints (a .py or .pyw file).
  static bool is_python_source(const std::string& path);

  /// Whether a function breakpoint's name is a Python function's qualified name with its
  /// module ("helper.accumulate", "pkg.mod.Klass.method"): a dotted name of identifiers.
  /// (Native names have no dots: C++ ones use "::".)
  static bool is_python_function(const std::string& name);

  /// Removes the Python breakpoints `replaced` selects and adds `bps` (ids and specs set;
  /// conditions in Python, checked by check_script_condition): lines of a .py file, or
  /// functions by qualified name (bound at the first line of their body). Binds them in the
  /// code known here; returns them.
  std::vector<Breakpoint> replace(const std::function<bool(const Breakpoint&)>& replaced,
                                  std::vector<Breakpoint> bps);
  /// The breakpoint with id `id`, nullptr when it is not a Python one.
  const Breakpoint* find(int id) const;
  /// Ids whose binding changed (found code, or lost a watch) since the last call.
  std::vector<int> take_rebound() { return std::exchange(rebound_, {}); }
  /// Sets every hit count back to 0 (DAP restart).
  void reset_hit_counts() {
    for (auto& [id, bp] : bps_) bp.hits = 0;
  }

  /// A Debugger::resume in direction `dir` begins (pending breakpoints look at the stacks
  /// here again). end_resume() takes away what prepare() armed.
  void begin_resume(Direction dir);
  void end_resume();
  /// Before each run of the resume: arms the read watchpoints (and, forwards, the
  /// PyEval_EvalCode breakpoint that finds new code), also once code mapped since brings the
  /// interpreter (a library loaded later: libpython3.N.so).
  void prepare();
  /// Whether a forward run should pause where code is mapped: breakpoints are set and the
  /// interpreter is not found yet.
  bool waits_for_interpreter();
  /// Whether read watchpoints are armed: a reverse run then stops after each access
  /// (Timeline::WatchStop::AfterWrite).
  bool watching() const { return !armed_.empty(); }

  /// Whether `s` is a stop at the PyEval_EvalCode breakpoint; on_code_start() reads the code
  /// it is about to run and binds the breakpoints in it.
  bool is_code_start(const StopInfo& s) const {
    return s.reason == StopReason::Breakpoint && code_start_ && s.addr == code_start_;
  }
  void on_code_start(const StopInfo& s);

  /// What a stop at one of the read watchpoints came to.
  using Outcome = ScriptBreakpointOutcome;
  /// Remembers stop `s` (a Python line step's end, just after the frame's instruction
  /// pointer was written) as a landing: a reverse run from there leaves out the fetch of the
  /// line it stands at.
  void note_landing(const StopInfo& s);
  /// Whether `s` is a stop at one of the read watchpoints.
  bool owns_watch(const StopInfo& s) const {
    return s.reason == StopReason::Watchpoint && watched_.count(s.addr);
  }
  /// Handles a stop owns_watch() accepted, in a run going `dir`; may move the timeline
  /// forwards (to the landing). With stop false, the run goes on from where it is.
  Outcome on_watch(const StopInfo& s, Direction dir);

 private:
  /// Reads code object `code` and those nested in it into codes_ (through task `tid`).
  void discover(pid_t tid, uint64_t code);
  /// Every code object on the Python stacks of every task here.
  void discover_stacks();
  /// The code of every function object alive here whose file has breakpoints (the
  /// collector's lists: PythonReader::function_codes), in the current task's process.
  void discover_functions();
  /// Binds `bp` in codes_ (adding its instructions to watched_); returns whether its binding
  /// changed.
  bool bind(Breakpoint& bp);
  /// Whether some breakpoint is bound nowhere yet.
  bool any_pending() const;
  void bind_all();
  void arm();
  void disarm();
  /// The frame running the code at watched address `addr` on task `tid`, when the read
  /// there is the eval loop fetching it to run next; 0 otherwise.
  uint64_t fetching_frame(pid_t tid, uint64_t addr);

  Timeline& tl_;
  PythonLocator& python_;
  BreakpointRefs& refs_;
  uint64_t code_start_ = 0;  ///< PyEval_EvalCode while its breakpoint is armed
  std::optional<CodeSite> code_start_site_;
  /// PyEval_EvalCode's address and site, with the file and runtime start of the module
  /// holding it: each resume arms that breakpoint again, without reading the mappings again
  /// while that module stays where it is.
  struct KnownSite {
    uint64_t addr = 0;
    std::string file;
    uint64_t lo = 0;
    CodeSite site;
  };
  std::optional<KnownSite> code_start_known_;
  std::map<uint64_t, PythonCode> codes_;  ///< by address
  std::map<int, Breakpoint> bps_;
  /// Bound instruction -> its code object and source line.
  std::map<uint64_t, std::pair<uint64_t, int>> watched_;
  std::vector<uint64_t> armed_;  ///< instructions with a read watchpoint now
  std::vector<int> rebound_;
  /// Whether the timeline stands where the last landing (note_landing) left it, at the start
  /// of a watched line: a reverse run meets that line's own fetch first.
  bool at_landing();
  // The resume in progress.
  Direction dir_ = Direction::Forward;
  pid_t skip_tid_ = 0;        ///< backwards: the next fetch found on this task is the landing's own
  uint64_t skipped_rip_ = 0;  ///< where the read skipped last was made
  /// Code in the eval loop that reads an instruction unit again after its fetch began (the
  /// argument byte loaded apart from the opcode): learnt on landings, not a fetch of its own.
  std::set<uint64_t> secondary_rips_;
  /// The last stop at the start of a Python line (a hit, or a Python line step), with the
  /// task's registers there: with its event and task, what tells the point (the timeline
  /// reports it as its own watchpoint stop). Two passes of a loop with no syscall can have
  /// the same registers at the same event, so only the last landing is remembered.
  std::optional<std::pair<StopInfo, Registers>> landing_;
};

}  // namespace rwd
