// Omniscient queries over a recording: the history of a value (every change of an lvalue's
// bytes over the whole recording or a range of events), answered without moving the
// debugging session. The query replays the trace a second time, on its own timeline, with a
// write watchpoint on the lvalue's address as the expression names it at the current point
// (gdb's `watch -location`); each change found can then be gone to on the session's own
// timeline (go_to_change). Odb's `history` and WinDbg TTD's memory queries do the same.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/debugger/debugger.h"
#include "engine/debugger/recording_query.h"
#include "engine/interp/python/python_frames.h"
#include "engine/interp/r/r_frames.h"

namespace rwd {

/// One change of the watched bytes.
struct ValueChange {
  /// The last event replayed before the write: the write lies between it and the next.
  uint64_t event = 0;
  /// Which stop of a write watchpoint on the value, counted from the point just after
  /// `event` (1 = the first), is this change: how go_to_change() finds it again.
  uint32_t ordinal = 0;
  pid_t tid = 0;         ///< recorded tid of the task that wrote
  uint64_t pc = 0;       ///< runtime address just after the writing instruction
  std::string function;  ///< the function of the writing instruction ("" when unknown)
  std::string file;      ///< its source file ("" without line information)
  uint32_t line = 0;
  /// For a struct or an array: the members or elements the write changed, as C names them
  /// after the expression (".x", "[3]", ".pos.x, .pos.y"); "" for a scalar (value_diff.h).
  std::string member;
  /// Formatted as the Variables view shows values: the whole value's, or the changed parts'
  /// (joined by ", " in `member`'s order).
  std::string old_value, new_value;
  std::vector<uint8_t> new_bytes;  ///< the bytes written
  /// Where the write was, when not in ValueHistory::watched (an R vector changed in place:
  /// its elements, r_history.cpp): `ordinal` then counts the stops there that
  /// ValueHistory::counts_elsewhere accepts. 0: the watched bytes.
  uint64_t written_addr = 0;
  int written_len = 0;  ///< bytes at written_addr
};

/// What a history query asks for.
struct HistoryRequest {
  pid_t tid = 0;             ///< recorded tid whose frame evaluates the expression
  size_t frame = 0;          ///< frame index in that task's stack (0: innermost)
  std::string expression;    ///< a C lvalue of 1 to kMaxWatchBytes bytes
  uint64_t first_event = 1;  ///< changes made after this event...
  uint64_t last_event = 0;   ///< ...and before the one after this event (0: to the end)
};

/// What a history query about a Python or R local asks for (script_history.cpp,
/// r_history.cpp).
struct ScriptHistoryRequest {
  pid_t tid = 0;             ///< recorded tid of the thread whose Python or R frame it is
  uint64_t frame = 0;        ///< the frame's address (InterpFrame::address; R: its context)
  std::string name;          ///< a local variable of that frame's code
  uint64_t first_event = 1;  ///< as HistoryRequest
  uint64_t last_event = 0;
};

/// The answer: every change in the range, oldest first.
struct ValueHistory {
  WatchInfo watched;  ///< the address, size and type followed
  pid_t pid = 0;      ///< recorded pid of the process whose memory it is
  /// For a variable on a task's stack: the function whose frame holds it. Only writes made
  /// while that frame lives (same canonical frame address) count; "" for other memory.
  std::string frame_function;
  std::vector<ValueChange> changes;
  /// False when the query was interrupted (HistoryQuery::interrupt): `changes` holds those
  /// found before the interruption, up to `reached_event`.
  bool complete = true;
  bool truncated = false;      ///< it stopped at RecordingQuery::kMaxResults changes
  uint64_t reached_event = 0;  ///< the last event the query replayed
  /// For changes written elsewhere (ValueChange::written_addr): whether a write watchpoint's
  /// stop there, on the given timeline, is one the query counted (the value there is still
  /// the variable's). Empty when no change is.
  std::function<bool(Timeline&, const StopInfo&)> counts_elsewhere;
  /// Run by go_to_change once it found a change again: moves on to where the change can be
  /// seen (an R local's making: on to where its frame holds it) and gives the stop there;
  /// empty to stay at the write.
  std::function<std::optional<StopInfo>(Debugger&, const StopInfo&)> settle;
};

/// Runs history queries on a second replay of the trace at `trace_dir`.
class HistoryQuery : public RecordingQuery {
 public:
  explicit HistoryQuery(std::string trace_dir) : RecordingQuery(std::move(trace_dir)) {}

  /// Evaluates `req.expression` in debugger `d` at its current point (which it does not
  /// move) and replays the trace from `req.first_event` on a new timeline, collecting each
  /// change of the value's bytes made by a task of the same process. `progress` is called
  /// now and then with the event reached and the changes found so far. Throws Error
  /// (ExpressionError) when the expression is not an lvalue of 1 to kMaxWatchBytes bytes,
  /// or the trace cannot be replayed. A struct or an array (a wide watch: see
  /// Timeline::add_watchpoint) reports the parts each write changed (ValueChange::member).
  ValueHistory run(Debugger& d, const HistoryRequest& req, const QueryProgress& progress = {});
  /// The bindings of a Python local in one call (script_history.cpp): each object the
  /// frame's slot for it took while that call ran, from the binding of an argument or the
  /// first assignment on (a `del` shows as "<unbound>"), formatted as the Variables view
  /// shows Python values; the writing line is the Python line running then (the call's
  /// line for an argument). Calls of the same code that put a frame at the same address
  /// (a loop calling the function) are told apart, with the point the question is asked
  /// at naming the call. `python` reads the interpreter of debugger `d`'s program. Throws
  /// Error when the name is not a plain local of the frame (see PythonReader::local_slot).
  ValueHistory run_python(Debugger& d, const PythonReader& python, const ScriptHistoryRequest& req,
                          const QueryProgress& progress = {});
  /// The values of an R local in one call (r_history.cpp): each value its binding took while
  /// that call ran, from its binding (an argument as the call starts, a new local at its
  /// first assignment) on, formatted as the Variables view shows R values; the writing line
  /// is the R line running then (the caller's for an argument). A vector changed in place
  /// (`x[i] <- v`, a `for` loop's variable) is followed through a watch on its elements when
  /// they are at most kMaxWatchBytes; larger ones only when rebound.
  /// Calls whose contexts stand at the same address (a loop or lapply calling the function)
  /// are told apart, with the point the question is asked at naming the call. `r` reads the
  /// interpreter of debugger `d`'s program. Throws Error when the name is not bound in the
  /// call's own environment at this point (RReader::local_binding).
  ValueHistory run_r(Debugger& d, const RReader& r, const ScriptHistoryRequest& req,
                     const QueryProgress& progress = {});
};

/// Goes, on debugger `d`'s own timeline, to the point just after the write of change `c` of
/// `h` (where a forward data breakpoint on it stops): to the point just after c.event, then
/// forward to the c.ordinal-th stop of a write watchpoint on the value (or on
/// c.written_addr, counting the stops h.counts_elsewhere accepts). The stop has reason
/// Watchpoint with the old and new bytes. Throws Error when every watchpoint slot is in
/// use, or when the replay finds another write there (the trace is not the query's).
DebugStop go_to_change(Debugger& d, const ValueHistory& h, const ValueChange& c);

/// Moves debugger `d`'s own timeline to the next change (Forward) or the last change before
/// now (Backward) of the bytes `w` names, made by a task of the process of task `tid` (the
/// one whose frame named them): the point just
/// after that write, where a forward data breakpoint on it stops (in both directions).
/// Other stops on the way (breakpoints, the user's own watchpoints) are passed. The stop has
/// reason Watchpoint with the old and new bytes, or TraceEnd / TraceStart when no change is
/// left that way (Interrupted when interrupted). The user's other watchpoints are set aside
/// for the time of the move (Debugger::set_watches_aside), so a slot is always free.
DebugStop step_to_change(Debugger& d, const WatchInfo& w, pid_t tid, Direction dir);

/// Where step_to_python_change() or step_to_r_change() left the session.
struct ScriptChangeStop {
  /// found: reason Watchpoint, just after the write of the local's slot (Python) or of its
  /// binding or its vector's elements (R), with the old and new bytes; else the stop back at
  /// the point it started from (reason Breakpoint), or the Interrupted stop where the user
  /// interrupted it.
  DebugStop stop;
  bool found = false;
  std::string value;  ///< found: the value now, as the Variables view shows it
};

/// Moves debugger `d`'s own timeline to the next (Forward) or the last (Backward) change of
/// the binding of Python local `name` in the call that frame `frame` (InterpFrame::address)
/// of the thread on task `tid` runs now: the point just after the write of the local's slot
/// (STORE_FAST, DELETE_FAST, or the call binding an argument), where a forward data
/// breakpoint on the slot stops. The call's bounds are where a frame is put at its address:
/// backwards its own start, forwards the next call's (a write watchpoint on the frame's code
/// word). Where the call makes no such change that way, the session goes back to where it
/// started (found false). Other stops on the way are passed; the user's watchpoints are set
/// aside meanwhile (Debugger::set_watches_aside). Throws Error when `name` is not a plain
/// local of the frame (PythonReader::local_slot), InterpReadError when the frame cannot be
/// read.
ScriptChangeStop step_to_python_change(Debugger& d, const PythonReader& py, pid_t tid,
                                       uint64_t frame, const std::string& name, Direction dir);

/// Moves debugger `d`'s own timeline to the next (Forward) or the last (Backward) change of
/// R local `name` in the call of context `ctx` (InterpFrame::address) on task `tid`
/// (r_history.cpp): the point just after the write of its binding (an assignment) or of the
/// elements of the vector it holds (changed in place), where a forward data breakpoint on
/// them stops. The call's bounds are where a context starts at its address (a write
/// watchpoint on its cloenv word): backwards the call's own start, forwards the next one
/// there. A local not bound yet where the move starts is found, forwards, where the call
/// makes it. Where the call makes no such change that way, the session goes back to where it
/// started (found false). Other stops on the way are passed; the user's watchpoints are set
/// aside meanwhile. Throws Error as RReader::local_binding, InterpReadError when the call
/// cannot be read.
ScriptChangeStop step_to_r_change(Debugger& d, const RReader& r, pid_t tid, uint64_t ctx,
                                  const std::string& name, Direction dir);

}  // namespace rwd
