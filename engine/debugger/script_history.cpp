// The bindings of a Python local: its history (HistoryQuery::run_python), the objects one
// call's slot for it was bound to, found on a second replay; and its previous and next change
// on the session's own timeline (step_to_python_change: rewind/previousChange and
// rewind/nextChange in a Python frame). Both use two write watchpoints, one on the slot (the
// frame's localsplus entry, written by STORE_FAST, DELETE_FAST and the binding of the
// arguments) and one on the frame's code word, written each time a call puts a frame at that
// address (_PyFrame_Initialize), which tells the calls apart.
#include <algorithm>
#include <cstring>

#include "engine/debugger/history_support.h"
#include "engine/debugger/hit_history.h"
#include "engine/debugger/value_history.h"
#include "engine/interp/python/python_objects.h"

namespace rwd {

namespace {

/// What a Python local shows while it is unbound.
constexpr const char* kUnbound = "<unbound>";

/// A write of the local's slot, before the calls are told apart.
struct SlotWrite {
  ValueChange change;
  uint64_t object = 0;  ///< the object bound now (0: unbound)
  size_t call = 0;      ///< how many frames had been put at the frame's address before it
};

/// Names the Python code running on task `tid` now (its innermost frame): function, file,
/// line. Left empty when it cannot be read.
void describe_python(const PythonReader& py, InterpMemory& mem, pid_t tid, ValueChange& c) {
  try {
    if (uint64_t f = py.current_frame(mem, tid)) {
      InterpFrame top = py.frame_summary(mem, f);
      c.function = top.function;
      c.file = top.file;
      c.line = uint32_t(std::max(top.line, 0));
    }
  } catch (const InterpReadError&) {
  }
}

/// The object at `obj` as the Variables view shows a Python value.
std::string python_value(const PythonReader& py, InterpMemory& mem, uint64_t obj) {
  obj = stackref_object(py.layout(), obj);  // a slot's word: a _PyStackRef from 3.14
  if (!obj) return kUnbound;
  try {
    std::string type;
    return python_repr(mem, py.layout(), obj, type);
  } catch (const InterpReadError& e) {
    return std::string("<unreadable: ") + e.what() + ">";
  }
}

/// The two words a Python local's bindings are followed by, read at the current point of
/// debugger `d`: local `name`'s slot in frame `frame` of the thread on task `tid`, and the
/// frame's code word with the code object it holds. Throws as PythonReader::local_slot.
struct LocalWatches {
  WatchInfo slot;
  WatchInfo code_word;
  uint64_t code = 0;
};
LocalWatches local_watches(Debugger& d, const PythonReader& py, pid_t tid, uint64_t frame,
                           const std::string& name) {
  InterpMemory mem(d.target(tid));
  return {{py.local_slot(mem, frame, name), 8, "Python local", nullptr},
          {frame + uint64_t(py.layout().frame_code), 8, "", nullptr},
          py.frame_code(mem, frame)};
}

/// Whether watchpoint stop `s` at the local's slot is a change of the binding of the call
/// that frame `frame` (running `code`) runs on task `tid`, at debugger `d`'s point there: a
/// different object, written while that frame runs, or while it is set up for the call (the
/// arguments' binding). A NULL written by the set-up (a new frame's slots are cleared before
/// its arguments are bound) is not a change of this call; a NULL written while the frame runs
/// is a `del`.
bool binding_changed(Debugger& d, const PythonReader& py, const StopInfo& s, pid_t tid,
                     uint64_t frame, uint64_t code) {
  if (s.old_value == s.new_value || s.tid != tid) return false;
  InterpMemory mem(d.target(tid));
  try {
    if (py.frame_code(mem, frame) != code || !py.running_or_entering(mem, tid, frame)) return false;
    return stackref_object(py.layout(), pointer_in(s.new_value)) != 0 ||
           py.current_frame(mem, tid) == frame;
  } catch (const InterpReadError&) {
    return false;
  }
}

}  // namespace

ValueHistory HistoryQuery::run_python(Debugger& d, const PythonReader& py,
                                      const ScriptHistoryRequest& req,
                                      const QueryProgress& progress) {
  ValueHistory h;
  const LocalWatches local = local_watches(d, py, req.tid, req.frame, req.name);
  const uint64_t code = local.code;
  const WatchInfo& code_word = local.code_word;
  h.watched = local.slot;
  {
    InterpMemory mem(d.target(req.tid));
    h.frame_function = py.frame_summary(mem, req.frame).function;
  }
  h.pid = TaskProcesses(d.timeline()).pid_of(req.tid);
  TimelinePosition here = d.timeline().position();
  std::optional<CodeSite> here_site = position_site(d.timeline(), here);

  Run run(*this, req.first_event, req.last_event, progress);
  Timeline& tl = run.timeline();
  Debugger qd(tl);
  ScopedWatch slot_watch(tl, h.watched, false);
  ScopedWatch code_watch(tl, code_word, false);
  PositionSplit split(tl, here, here_site, std::nullopt);
  size_t calls = 0, calls_before = 0;
  std::vector<SlotWrite> writes;
  while (auto stop = run.next(writes.size())) {
    const StopInfo& s = *stop;
    bool after = split.after(s);
    // The thread's own data stack holds its frames: no other thread writes them.
    if (s.reason != StopReason::Watchpoint || s.tid != req.tid) continue;
    if (s.addr == code_word.addr) {
      ++calls;  // a call put a frame here
      if (!after) calls_before = calls;
      continue;
    }
    if (s.addr != h.watched.addr) continue;
    uint32_t ordinal = run.count();
    if (s.old_value == s.new_value) continue;
    InterpMemory mem(qd.target(s.tid));
    try {
      // The frame there runs the question's code, and runs (or binds its arguments before
      // it starts): not a frame at another address that covers the slot since it returned.
      if (py.frame_code(mem, req.frame) != code) continue;
      if (!py.running_or_entering(mem, s.tid, req.frame)) continue;
    } catch (const InterpReadError&) {
      continue;
    }
    SlotWrite w;
    w.change.event = s.event;
    w.change.ordinal = ordinal;
    w.change.tid = s.tid;
    w.change.pc = tl.registers(s.tid).rip;
    describe_python(py, mem, s.tid, w.change);
    w.object = stackref_object(py.layout(), pointer_in(s.new_value));
    w.change.new_value = python_value(py, mem, w.object);
    w.change.new_bytes = s.new_value;
    w.call = calls;
    writes.push_back(std::move(w));
  }
  // The call asked about: its bindings, from the first on (a new frame's slots are cleared
  // first; what they held was the previous call's).
  std::string old = kUnbound;
  for (SlotWrite& w : writes) {
    if (w.call != calls_before || (!w.object && old == kUnbound)) continue;
    w.change.old_value = std::exchange(old, w.change.new_value);
    h.changes.push_back(std::move(w.change));
  }
  h.reached_event = run.reached();
  h.complete = run.complete();
  h.truncated = run.truncated();
  return h;
}

ScriptChangeStop step_to_python_change(Debugger& d, const PythonReader& py, pid_t tid,
                                       uint64_t frame, const std::string& name, Direction dir) {
  Timeline& tl = d.timeline();
  const LocalWatches local = local_watches(d, py, tid, frame, name);
  TimelinePosition here = tl.position();
  ScriptChangeStop out;
  {
    SessionWatch slot_watch(d, local.slot);
    ScopedWatch code_watch(tl, local.code_word, false);
    // A frame put at the frame's address (its code word written): forwards, the call has
    // returned and another one stands there; backwards, the call asked about begins here.
    CallScan end =
        scan_call(tl, dir, tid, local.code_word.addr, out.stop.stop, [&](const StopInfo& s) {
          return s.addr == local.slot.addr && binding_changed(d, py, s, tid, frame, local.code);
        });
    if (end == CallScan::Interrupted) {
      d.refresh();
      return out;
    }
    out.found = end == CallScan::Found;
  }
  if (out.found) {
    d.refresh();
    InterpMemory mem(d.target(tid));
    out.value = python_value(py, mem, pointer_in(out.stop.stop.new_value));
    return out;
  }
  // No change that way in this call: back to where the question was asked.
  out.stop = go_to_position(d, here);
  return out;
}

}  // namespace rwd
