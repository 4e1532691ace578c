// The history of a Python local (HistoryQuery::run_python): the objects one call's slot for
// it was bound to, found on a second replay with two write watchpoints, one on the slot (the
// frame's localsplus entry, written by STORE_FAST, DELETE_FAST and the binding of the
// arguments) and one on the frame's code word, written each time a call puts a frame at that
// address (_PyFrame_Initialize), which tells the calls apart.
#include <algorithm>
#include <cstring>

#include "engine/debugger/history_support.h"
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
  if (!obj) return kUnbound;
  try {
    std::string type;
    return python_repr(mem, py.layout(), obj, type);
  } catch (const InterpReadError& e) {
    return std::string("<unreadable: ") + e.what() + ">";
  }
}

/// The pointer held in the 8 bytes `b` (fewer: 0).
uint64_t pointer_in(const std::vector<uint8_t>& b) {
  uint64_t v = 0;
  if (b.size() == sizeof v) std::memcpy(&v, b.data(), sizeof v);
  return v;
}

}  // namespace

ValueHistory HistoryQuery::run_python(Debugger& d, const PythonReader& py,
                                      const PythonHistoryRequest& req,
                                      const QueryProgress& progress) {
  ValueHistory h;
  uint64_t code = 0;
  {
    InterpMemory mem(d.target(req.tid));
    h.watched.addr = py.local_slot(mem, req.frame, req.name);
    code = py.frame_code(mem, req.frame);
    h.frame_function = py.frame_summary(mem, req.frame).function;
  }
  h.watched.len = 8;
  h.watched.type = "Python local";
  h.pid = TaskProcesses(d.timeline()).pid_of(req.tid);
  const WatchInfo code_word{req.frame + uint64_t(py.layout().frame_code), 8, "", nullptr};
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
    w.object = pointer_in(s.new_value);
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

}  // namespace rwd
