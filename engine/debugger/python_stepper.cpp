#include "engine/debugger/python_stepper.h"

#include <algorithm>
#include <cstring>

#include "engine/debugger/step_watches.h"
#include "engine/debugger/timeline_target.h"
#include "engine/errors.h"

namespace rwd {

namespace {

/// Watches what a step from `start` follows: the innermost frame's instruction word (not for
/// Out) and its caller's.
void watch_frames(StepWatches& w, const std::vector<InterpFrame>& start, StepKind kind) {
  if (kind != StepKind::Out) w.add(start[0].step_word);
  if (start.size() > 1) w.add(start[1].step_word);
}

}  // namespace

std::vector<InterpFrame> PythonStepper::stack(pid_t tid) {
  TimelineTarget target(tl_, tid);
  InterpMemory mem(target);
  return py_.stack(mem, tid);
}

std::pair<uint64_t, uint64_t> PythonStepper::current_frame(pid_t tid) {
  TimelineTarget target(tl_, tid);
  InterpMemory mem(target);
  try {
    uint64_t word = py_.current_frame_word(mem, tid);
    return {word, word ? mem.u64(word) : 0};
  } catch (const InterpReadError&) {
    return {0, 0};
  }
}

bool PythonStepper::ends_step(const StopInfo& s, const std::vector<uint64_t>& words) const {
  return ends_script_step(s, words, user_bp_);
}

StopInfo PythonStepper::step(pid_t tid, StepKind kind, Direction dir) {
  std::vector<InterpFrame> start = stack(tid);
  if (!readable(start))
    throw Error("cannot step by Python lines: task " + std::to_string(tid) +
                " runs no Python frame here");
  return dir == Direction::Forward ? forward(tid, kind, start) : backward(tid, kind, start);
}

StopInfo PythonStepper::forward(pid_t tid, StepKind kind, const std::vector<InterpFrame>& start) {
  const InterpFrame& f = start[0];
  const InterpFrame* caller = start.size() > 1 ? &start[1] : nullptr;
  size_t depth = start.size();
  StepWatches w(tl_, "Python lines");
  watch_frames(w, start, kind);
  // Into: the thread's current-frame word, until a call is seen; then the called frame's
  // instruction word.
  uint64_t frames_word = kind == StepKind::Into ? current_frame(tid).first : 0;
  uint64_t callee_word = 0;
  w.add(frames_word);
  for (;;) {
    StopInfo s = tl_.resume_forward();
    if (ends_step(s, w.words())) return s;
    if (s.reason != StopReason::Watchpoint || s.tid != tid) continue;
    if (s.addr == frames_word) {
      uint64_t now = word_value(s.new_value);
      if (now && now != f.address && (!caller || now != caller->address)) {
        // A call: follow the new frame to its first instruction.
        w.remove(frames_word);
        frames_word = 0;
        callee_word = py_.step_word(now);
        w.add(callee_word);
      }
      continue;
    }
    std::vector<InterpFrame> st = stack(tid);
    if (!readable(st)) continue;
    if (s.addr == callee_word && st.size() > depth) return landed(s);
    bool same_frame = st.size() == depth && st[0].address == f.address;
    if ((same_frame && st[0].line != f.line && kind != StepKind::Out) || st.size() < depth)
      return landed(s);
  }
}

StopInfo PythonStepper::backward(pid_t tid, StepKind kind, const std::vector<InterpFrame>& start) {
  const InterpFrame& f = start[0];
  const InterpFrame* caller = start.size() > 1 ? &start[1] : nullptr;
  size_t depth = start.size();
  StepWatches w(tl_, "Python lines");
  watch_frames(w, start, kind);
  auto ours = [&](const std::vector<InterpFrame>& st) {
    return readable(st) && st.size() == depth && st[0].address == f.address;
  };
  // Forward to this frame's next write: the start of the instruction after the last stop.
  auto forward_to_own = [&]() {
    for (;;) {
      StopInfo n = tl_.resume_forward();
      if (ends_step(n, w.words())) return n;
      if (n.reason == StopReason::Watchpoint && n.tid == tid && n.addr == f.step_word &&
          ours(stack(tid)))
        return landed(n);
    }
  };
  // Into: the thread's current-frame word, whose write as a callee returns into this frame
  // (the new value this frame, the old one the callee) is the first sign of a call met going
  // back; then into the callee, as gdb's reverse-step enters a function from its end.
  uint64_t frames_word = kind == StepKind::Into ? current_frame(tid).first : 0;
  w.add(frames_word);
  // The reverse run stops just after each write of a watched word (no single steps: a stop
  // before the write would single-step the task from its last event, over every call made
  // since), where the word names the instruction starting there. Going back through this
  // frame's instructions, the first on another line is the previous line's last; the first
  // on yet another line comes just before the previous line's run, whose first instruction
  // is the frame's next write forward. Before the frame's first instruction (the frame is
  // not on the stack yet) comes the caller's write of its call instruction.
  PreviousLineScan scan{f.line};
  for (;;) {
    StopInfo s = tl_.resume_backward(Timeline::WatchStop::AfterWrite);
    if (ends_step(s, w.words())) return s;
    if (s.reason != StopReason::Watchpoint || s.tid != tid) continue;
    if (frames_word && s.addr == frames_word) {
      uint64_t callee = word_value(s.old_value);
      if (word_value(s.new_value) == f.address && callee && callee != f.address &&
          (!caller || callee != caller->address)) {
        w.remove(frames_word);
        return back_into_callee(tid, callee, depth + 1, w);
      }
      continue;  // a push, or this frame's own
    }
    std::vector<InterpFrame> st = stack(tid);
    if (s.addr == f.step_word && ours(st)) {
      if (scan.before_previous(st[0].line))
        return forward_to_own();  // onto the previous line's first instruction
      continue;
    }
    if (readable(st) && st.size() > depth) continue;  // not this frame's doing
    if (scan.found) return forward_to_own();          // the previous line began the frame
    // The caller's writes while it makes the call (it saves its instruction pointer once the
    // new frame is pushed) come after the call instruction's own: land on that one, so that
    // a step forward from there steps over (or into) the whole call.
    if (caller && s.addr == caller->step_word && current_frame(tid).second == caller->address)
      return landed(s);
  }
}

StopInfo PythonStepper::back_into_callee(pid_t tid, uint64_t callee, size_t depth, StepWatches& w) {
  const uint64_t word = py_.step_word(callee);
  w.add(word);
  auto in_callee = [&](const std::vector<InterpFrame>& st) {
    return readable(st) && st.size() == depth && st[0].address == callee;
  };
  // Forward to the callee's first instruction on line `line` (any line: 0).
  auto forward_to = [&](int line) {
    for (;;) {
      StopInfo n = tl_.resume_forward();
      if (ends_step(n, w.words())) return n;
      if (n.reason != StopReason::Watchpoint || n.tid != tid || n.addr != word) continue;
      std::vector<InterpFrame> st = stack(tid);
      if (in_callee(st) && (line == 0 || st[0].line == line)) return landed(n);
    }
  };
  // Back through the callee's instructions (its calls write other words): the first is on
  // its last line; the first on another line comes just before that line's run.
  int last = 0;
  for (;;) {
    StopInfo s = tl_.resume_backward(Timeline::WatchStop::AfterWrite);
    if (ends_step(s, w.words())) return s;
    if (s.reason != StopReason::Watchpoint || s.tid != tid) continue;
    std::vector<InterpFrame> st = stack(tid);
    if (s.addr == word && in_callee(st)) {
      if (last == 0) {
        last = st[0].line;
      } else if (st[0].line != last) {
        return forward_to(last);
      }
      continue;
    }
    if (s.addr != word) return forward_to(last);  // back before the call: its run began it
  }
}

}  // namespace rwd
