// Omniscient queries over a recording, by code location: every call of a function (with its
// arguments, caller and return value) and every hit of a logpoint, from the start of the
// recording to its end, without moving the debugging session. As value_history.h, the query
// replays the trace a second time on its own timeline, here with breakpoints at the
// function's or line's code (bound as the session binds them); each hit found can be gone to
// on the session's own timeline (go_to_hit). WinDbg TTD's call queries and Pernosco's
// "calls" view answer the same question.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/debugger/debugger.h"
#include "engine/debugger/recording_query.h"

namespace rwd {

/// What a hits query looks for.
struct HitRequest {
  /// The code: a function by name (as setFunctionBreakpoints takes it), or, when `file` is
  /// set, source line `line` of `file` (as setBreakpoints takes it).
  std::string function;
  std::string file;
  uint32_t line = 0;
  std::string condition;  ///< a C expression in the hit's frame; "" for every hit
  /// A logpoint's message ("{expr}" replaced by its value, VS Code's syntax); "" to collect
  /// calls (arguments, caller, return value) instead.
  std::string message;
  uint64_t first_event = 1;  ///< hits after this event...
  uint64_t last_event = 0;   ///< ...and before the one after this event (0: to the end)
};

/// One hit of the query's breakpoint.
struct RecordedHit {
  /// The last event replayed before the hit: it lies between this event and the next.
  uint64_t event = 0;
  /// Which stop at the breakpoint's code, counted from the point just after `event` (1 = the
  /// first), conditions aside: how go_to_hit() finds it again.
  uint32_t ordinal = 0;
  pid_t tid = 0;         ///< recorded tid of the task that hit it
  uint64_t pc = 0;       ///< runtime address of the breakpoint
  std::string function;  ///< the function there ("" when unknown)
  std::string file;      ///< its source file ("" without line information)
  uint32_t line = 0;
  std::string message;  ///< a logpoint's message, formatted there
  /// A call's arguments (name, value as the Variables view shows it), in declaration order.
  std::vector<std::pair<std::string, std::string>> arguments;
  std::string caller, caller_file;  ///< the calling function and its source file
  uint32_t caller_line = 0;
  bool returned = false;     ///< the call returned within the recording (and the range)
  std::string return_value;  ///< what it returned ("" for void, or when it did not return)
  /// Whether `returned` and `return_value` were followed: always for a native call; for a
  /// Python one where a debug register could watch its return, for an R one where R's
  /// context layout is known (R 4.0-4.3; script_hits.cpp), never for a logpoint's hit.
  bool return_known = true;
  /// A script hit's place (the session goes there with go_to_hit); nullopt for native hits,
  /// found again by `ordinal`.
  std::optional<TimelinePosition> position;
};

/// The answer: every hit in the range, oldest first.
struct HitHistory {
  std::string what;             ///< the function or "file:line" asked for
  std::vector<CodeSite> sites;  ///< where the breakpoint bound (in every file mapping it)
  std::vector<RecordedHit> hits;
  bool complete = true;        ///< false when interrupted: `hits` holds those found before
  bool truncated = false;      ///< it stopped at RecordingQuery::kMaxResults hits
  uint64_t reached_event = 0;  ///< the last event the query replayed
};

/// Runs hits queries on a second replay of the trace at `trace_dir`.
class HitQuery : public RecordingQuery {
 public:
  explicit HitQuery(std::string trace_dir) : RecordingQuery(std::move(trace_dir)) {}

  /// Binds the breakpoint `req` describes, replays the trace from `req.first_event` on a
  /// new timeline and collects each hit whose condition holds (an unreadable condition
  /// counts as holding, as for breakpoints). A call's return value is read where it
  /// returns to its caller (rax, or xmm0 for floating types; a struct or union is not shown).
  /// `progress` is called now and then with the event reached and the hits so far. The
  /// session's timeline is not used (nor moved). Script code (a line of a .py or .R file, a
  /// Python or R function as a function breakpoint names it) is run_script's. Throws Error
  /// when the native function or line has no code in the trace's files, the condition is
  /// malformed, or the trace cannot be replayed.
  HitHistory run(const HitRequest& req, const QueryProgress& progress = {});

 private:
  /// The hits of script code (Python or R) on `run`, with `qd` the query's debugger
  /// over its timeline (script_hits.cpp): a script breakpoint (python_breakpoints.h,
  /// r_breakpoints.h), stopped where it stops (a function's at the first line of its body),
  /// bound as the code is loaded. Each hit gives the script function, file and line there,
  /// the arguments as the Variables view shows them, the calling script function and line,
  /// a logpoint's message with `{name}` replaced by that local's value
  /// (script_log_message), and its position. `req.condition` is in the script's language.
  /// A Python call's return is followed by a write watchpoint on its thread's current-frame
  /// word, which the return writes with the caller's frame (PythonReader::frame_exit says
  /// what it returned); one thread's at a time, and only while the function breakpoint
  /// holds one debug register, so that its landings keep the two they need: other calls,
  /// and 3.11's calls from C (their frame is left without that write), have `return_known`
  /// false. An R call's return is seen at a breakpoint on Rf_endcontext, set while a call is
  /// pending (RReader::returned_value; R 4.0-4.3's layout only, else `return_known` false);
  /// a call left by a jump (an error) has `returned` false. Code that is never loaded is an
  /// empty answer (a module never imported).
  HitHistory run_script(const HitRequest& req, Run& run, Debugger& qd);
};

/// Goes, on debugger `d`'s own timeline, to hit `hit` of `h`: to the point just after
/// hit.event, then forward to the hit.ordinal-th stop at the breakpoint's code. The stop
/// has reason Breakpoint. Throws Error when the replay finds another task or place there.
DebugStop go_to_hit(Debugger& d, const HitHistory& h, const RecordedHit& hit);

/// Goes, on debugger `d`'s own timeline, to position `p` (a query's Timeline::position of
/// the same trace): to the point just after p.event, then forward with a breakpoint at p's
/// instruction to the stop that is p. The stop has reason Breakpoint. Throws Error when the
/// replay does not find it before the next event.
DebugStop go_to_position(Debugger& d, const TimelinePosition& p);

}  // namespace rwd
