// The previous and next change of a Python local on the session's own timeline
// (step_to_python_change): rewind/previousChange and rewind/nextChange in a Python frame. The
// same two write watchpoints as its history (script_history.cpp): one on the local's slot, one
// on the frame's code word, written when a call puts a frame at that address, which marks
// where the call asked about begins (backwards) or where another one has replaced it
// (forwards).
#include <algorithm>
#include <cstring>

#include "engine/debugger/history_support.h"
#include "engine/debugger/hit_history.h"
#include "engine/debugger/value_history.h"
#include "engine/interp/python/python_objects.h"

namespace rwd {

namespace {

/// Whether watchpoint stop `s` at the local's slot is a change of the binding of the
/// call that frame `frame` (running `code`) runs on task `tid`: a different object, written
/// while that frame runs, or while it is set up for the call (the arguments' binding). A
/// NULL written by the set-up (a new frame's slots are cleared before its arguments are
/// bound) is not a change of this call; a NULL written while the frame runs is a `del`.
bool binding_changed(Debugger& d, const PythonReader& py, const StopInfo& s, pid_t tid,
                     uint64_t frame, uint64_t code) {
  if (s.old_value == s.new_value || s.tid != tid) return false;
  InterpMemory mem(d.target(tid));
  try {
    if (py.frame_code(mem, frame) != code || !py.running_or_entering(mem, tid, frame)) return false;
    bool unbinds =
        std::all_of(s.new_value.begin(), s.new_value.end(), [](uint8_t b) { return b == 0; });
    return !unbinds || py.current_frame(mem, tid) == frame;
  } catch (const InterpReadError&) {
    return false;
  }
}

}  // namespace

PythonChangeStop step_to_python_change(Debugger& d, const PythonReader& py, pid_t tid,
                                       uint64_t frame, const std::string& name, Direction dir) {
  Timeline& tl = d.timeline();
  WatchInfo slot;
  uint64_t code = 0;
  {
    InterpMemory mem(d.target(tid));
    slot = {py.local_slot(mem, frame, name), 8, "Python local", nullptr};
    code = py.frame_code(mem, frame);
  }
  const WatchInfo code_word{frame + uint64_t(py.layout().frame_code), 8, "", nullptr};
  TimelinePosition here = tl.position();
  PythonChangeStop out;
  {
    SessionWatch slot_watch(d, slot);
    ScopedWatch code_watch(tl, code_word, false);
    for (;;) {
      out.stop.stop = dir == Direction::Forward
                          ? tl.resume_forward()
                          : tl.resume_backward(Timeline::WatchStop::AfterWrite);
      const StopInfo& s = out.stop.stop;
      if (s.reason == StopReason::Interrupted) {
        d.refresh();
        return out;
      }
      if (run_ended(s)) break;
      if (s.reason != StopReason::Watchpoint || s.tid != tid) continue;
      // A frame put at this address: forwards, the call has returned and another one stands
      // there; backwards, the call asked about begins here.
      if (s.addr == code_word.addr) break;
      if (s.addr == slot.addr && binding_changed(d, py, s, tid, frame, code)) {
        out.found = true;
        break;
      }
    }
  }
  if (out.found) {
    d.refresh();
    InterpMemory mem(d.target(tid));
    uint64_t object = 0;
    std::memcpy(&object, out.stop.stop.new_value.data(),
                std::min(sizeof object, out.stop.stop.new_value.size()));
    try {
      std::string type;
      out.value = object ? python_repr(mem, py.layout(), object, type) : "<unbound>";
    } catch (const InterpReadError& e) {
      out.value = std::string("<unreadable: ") + e.what() + ">";
    }
    return out;
  }
  // No change that way in this call: back to where the question was asked.
  out.stop = go_to_position(d, here);
  return out;
}

}  // namespace rwd
