#include "engine/debugger/r_stepper.h"

#include <cstdio>
#include <cstdlib>

#include "engine/debugger/step_watches.h"
#include "engine/debugger/timeline_target.h"
#include "engine/errors.h"

namespace rwd {

namespace {

constexpr uint64_t kCallFlag = 8;  // RCNTXT's callflag, after nextcontext

bool holds(const std::vector<InterpFrame>& st, uint64_t ctx) {
  for (const InterpFrame& f : st)
    if (f.address == ctx) return true;
  return false;
}

}  // namespace

std::vector<InterpFrame> RStepper::stack(pid_t tid) {
  TimelineTarget target(tl_, tid);
  InterpMemory mem(target);
  try {
    return r_.stack(mem, 0);
  } catch (const InterpReadError& e) {
    InterpFrame f;
    f.error = e.what();
    return {f};
  }
}

RReader::ContextInfo RStepper::context(pid_t tid, uint64_t ctx) {
  TimelineTarget target(tl_, tid);
  InterpMemory mem(target);
  return r_.context_info(mem, ctx);
}

RReader::ContextInfo RStepper::popped_call(pid_t tid, const StopInfo& s) {
  uint64_t before = word_value(s.old_value);
  if (!before) return {};
  RReader::ContextInfo popped = context(tid, before);
  return popped.function && popped.next == word_value(s.new_value) ? popped
                                                                   : RReader::ContextInfo{};
}

int RStepper::started_frame(const StopInfo& s, const std::vector<InterpFrame>& st, pid_t tid) {
  if (!st.empty() && !st[0].error.empty()) return -1;
  if (s.addr == g_.srcref) {  // for the innermost frame, or top-level code
    TimelineTarget target(tl_, tid);
    InterpMemory mem(target);
    return r_.starts_statement(mem, word_value(s.new_value), word_value(s.old_value)) ? 0 : -1;
  }
  for (size_t k = 0; k < st.size(); ++k)
    if (st[k].step_word == s.addr) return int(k);
  return -1;
}

bool RStepper::ends_step(const StopInfo& s, const StepWatches& w) const {
  return ends_script_step(s, w.words(), user_bp_);
}

StopInfo RStepper::step(pid_t tid, StepKind kind, Direction dir) {
  if (!g_.srcref || !g_.context || !g_.bcpc)
    throw Error("cannot step by R lines: R's byte-code globals were not found in libR");
  std::vector<InterpFrame> start = stack(tid);
  if (!readable(start) || (kind != StepKind::Out && (start[0].line <= 0 || !start[0].step_word)))
    throw Error("cannot step by R lines: task " + std::to_string(tid) +
                " runs no R frame with a known line here");
  if (getenv("REWIND_DEBUG_RSTEP"))
    fprintf(stderr, "[r step] %s %s from %s:%d, depth %zu\n",
            kind == StepKind::Over   ? "over"
            : kind == StepKind::Into ? "into"
                                     : "out",
            dir == Direction::Forward ? "forward" : "backward", start[0].function.c_str(),
            start[0].line, start.size());
  return dir == Direction::Forward ? forward(tid, kind, start) : backward(tid, kind, start);
}

namespace {

/// REWIND_DEBUG_RSTEP=1: each watchpoint stop of a step on stderr, with the R stack's top.
void debug_stop(const char* phase, const StopInfo& s, const std::vector<InterpFrame>& st) {
  static const bool on = getenv("REWIND_DEBUG_RSTEP") != nullptr;
  if (!on) return;
  fprintf(stderr, "[r step %s] %s: %s -> %s; depth %zu, top %s:%d\n", phase, hex(s.addr).c_str(),
          hex(word_value(s.old_value)).c_str(), hex(word_value(s.new_value)).c_str(), st.size(),
          st.empty() ? "-" : st[0].function.c_str(), st.empty() ? 0 : st[0].line);
}

}  // namespace

StopInfo RStepper::forward(pid_t tid, StepKind kind, const std::vector<InterpFrame>& start) {
  InterpFrame f = start[0];
  size_t depth = start.size();
  uint64_t own = f.step_word != g_.srcref && kind != StepKind::Out ? f.step_word : 0;
  // Three debug registers: R_Srcref and the frame's own pc word, then R_GlobalContext for
  // the return (Over, Out) or R_BCpc (Into: a byte-compiled callee starting, and where its
  // pc word is, watched in its place). An Into sees the frame's return coming as R_Srcref
  // gets back the srcref its context saved, and then watches R_GlobalContext for it.
  StepWatches w(tl_, "R lines");
  w.add(g_.srcref);
  w.add(own);
  w.add(kind == StepKind::Into ? g_.bcpc : g_.context);
  uint64_t callee_word = 0, compiled = 0;
  auto watch_return = [&] {
    w.remove(own);
    w.remove(g_.bcpc);
    w.remove(callee_word);
    own = callee_word = 0;
    w.add(g_.context);
  };
  // A return into a frame without source (lapply's C code calling FUN, base R) goes on as a
  // step over that frame: to its caller, or (Into) to a callee with source.
  auto rebase = [&](const std::vector<InterpFrame>& st) {
    w.remove(own);
    own = 0;
    f = st[0];
    depth = st.size();
    if (kind == StepKind::Out) kind = StepKind::Over;
    if (kind == StepKind::Into && !w.watches(g_.bcpc)) {
      w.remove(g_.context);
      w.add(g_.bcpc);
    }
  };
  for (;;) {
    StopInfo s = tl_.resume_forward();
    if (ends_step(s, w)) return s;
    if (s.reason != StopReason::Watchpoint || s.tid != tid) continue;
    std::vector<InterpFrame> st = stack(tid);
    debug_stop("forward", s, st);
    if (!st.empty() && !st[0].error.empty()) continue;
    if (!holds(st, f.address)) {  // returned (or unwound) into the caller
      if (st.empty() || st[0].line > 0) return landed(s);
      rebase(st);
      continue;
    }
    if (s.addr == g_.context) {
      // Over and Out: a call made from here, run through in one stop.
      uint64_t now = word_value(s.new_value);
      RReader::ContextInfo pushed = context(tid, now);
      if (kind != StepKind::Into && now != f.address && pushed.function &&
          pushed.next == word_value(s.old_value))
        if (auto early = forward_over_call(tid, now, w)) return *early;
      continue;
    }
    // Into: R's JIT compiling a callee as it starts, a call of compiler:::tryCmpfun
    // (R_cmpfun1 in eval.c) that runs thousands of R calls, is run through in one stop.
    if (kind == StepKind::Into && st.size() > depth) {
      size_t k = 0;
      while (k < st.size() - depth && st[k].function.rfind("compiler:::", 0) != 0) ++k;
      if (k < st.size() - depth && st[k].address != compiled) {  // not once it is ending
        compiled = st[k].address;
        w.remove(callee_word);  // a compiler function's, if one was taken for the callee
        callee_word = 0;
        w.add(g_.bcpc);
        if (auto early = forward_over_call(tid, st[k].address, w)) return *early;
        continue;
      }
    }
    if (s.addr == g_.bcpc) {
      uint64_t word = word_value(s.new_value);
      if (word && st.size() > depth && st[0].step_word == word && !callee_word) {
        w.remove(g_.bcpc);
        callee_word = word;
        w.add(word);
      }
      continue;
    }
    int k = started_frame(s, st, tid);
    if (k != 0) {
      // Into: the frame's context getting its saved srcref back as it returns.
      if (s.addr == g_.srcref && kind == StepKind::Into && st.size() == depth &&
          st[0].address == f.address && !w.watches(g_.context)) {
        TimelineTarget target(tl_, tid);
        InterpMemory mem(target);
        if (r_.returning(mem, word_value(s.new_value))) watch_return();
      }
      continue;
    }
    if (st.size() > depth) {
      if (kind != StepKind::Into) continue;
      if (st[0].line > 0) return landed(s);
      if (s.addr == callee_word) {  // a function without source: watch for the next callee
        w.remove(callee_word);
        callee_word = 0;
        w.add(g_.bcpc);
      }
      continue;
    }
    if (st.size() == depth && st[0].address == f.address && kind != StepKind::Out &&
        st[0].line != f.line && f.line > 0)
      return landed(s);
  }
}

std::optional<StopInfo> RStepper::run_watching(
    pid_t tid, StepWatches& w, const std::vector<uint64_t>& words, Direction dir,
    const std::function<bool(const StopInfo&)>& arrived) {
  std::vector<uint64_t> set_aside = w.words();
  w.clear();
  std::optional<StopInfo> out;
  {
    StepWatches only(tl_, "R lines");
    for (uint64_t word : words) only.add(word);
    for (;;) {
      StopInfo s = dir == Direction::Forward ? tl_.resume_forward()
                                             : tl_.resume_backward(Timeline::WatchStop::AfterWrite);
      if (ends_step(s, only)) {
        out = s;
        break;
      }
      if (s.reason == StopReason::Watchpoint && s.tid == tid && arrived(s)) break;
    }
  }
  for (uint64_t word : set_aside) w.add(word);
  return out;
}

std::optional<StopInfo> RStepper::forward_over_call(pid_t tid, uint64_t ctx, StepWatches& w) {
  if (!g_.return_value_field) return std::nullopt;
  const uint64_t end = ctx + uint64_t(g_.return_value_field), callflag = ctx + kCallFlag;
  // Rf_begincontext clears returnValue just after the push; the body's end sets it.
  return run_watching(tid, w, {end, callflag}, Direction::Forward, [&](const StopInfo& s) {
    return s.addr == callflag || word_value(s.new_value) != 0;
  });
}

std::optional<StopInfo> RStepper::back_to_push(pid_t tid, uint64_t ctx, StepWatches& w) {
  const uint64_t callflag = ctx + kCallFlag;
  return run_watching(tid, w, {callflag}, Direction::Backward,
                      [&](const StopInfo&) { return !holds(stack(tid), ctx); });
}

StopInfo RStepper::forward_to_start(pid_t tid, const StepWatches& w, uint64_t frame, size_t depth,
                                    int line) {
  for (;;) {
    StopInfo n = tl_.resume_forward();
    if (ends_step(n, w)) return n;
    if (n.reason != StopReason::Watchpoint || n.tid != tid) continue;
    std::vector<InterpFrame> st = stack(tid);
    if (readable(st) && st.size() == depth && st[0].address == frame &&
        started_frame(n, st, tid) == 0 && (line == 0 || st[0].line == line))
      return landed(n);
  }
}

StopInfo RStepper::backward(pid_t tid, StepKind kind, std::vector<InterpFrame> start) {
  InterpFrame f = start[0];
  size_t depth = start.size();
  uint64_t f_next = context(tid, f.address).next;
  StepWatches w(tl_, "R lines");
  // R_Srcref, R_GlobalContext and the frame's pc word; once back before the frame's push,
  // the caller's pc word in place of the frame's.
  w.add(g_.srcref);
  w.add(g_.context);
  uint64_t own = f.step_word != g_.srcref ? f.step_word : 0;
  w.add(own);
  auto ours = [&](const std::vector<InterpFrame>& st) {
    return readable(st) && st.size() == depth && st[0].address == f.address;
  };
  // Forward to this frame's next start of code: the first of the line before the last stop.
  auto forward_to_own = [&]() { return forward_to_start(tid, w, f.address, depth, 0); };
  // The reverse run stops just after each write of a watched word (no single steps), where
  // the word names the code starting there. Going back through this frame's starts, the
  // first on another line is the previous line's last; the first on yet another line comes
  // just before the previous line's run, whose first start is the frame's next forward.
  // Before the frame's push come the caller's starts, the last of them its call.
  PreviousLineScan scan{f.line};
  bool before_frame = false;
  // Back before the frame's push: then on to the caller's pc word.
  auto before_push = [&] {
    before_frame = true;
    w.remove(own);
    own = 0;
    if (depth > 1 && start[1].address == f_next && start[1].step_word != g_.srcref)
      w.add(start[1].step_word);
  };
  if (kind == StepKind::Out) {  // nothing in the frame matters
    if (auto early = back_to_push(tid, f.address, w)) return *early;
    before_push();
  }
  for (;;) {
    StopInfo s = tl_.resume_backward(Timeline::WatchStop::AfterWrite);
    if (ends_step(s, w)) return s;
    if (s.reason != StopReason::Watchpoint || s.tid != tid) continue;
    std::vector<InterpFrame> st = stack(tid);
    debug_stop("backward", s, st);
    if (s.addr == g_.context) {
      uint64_t now = word_value(s.new_value), before = word_value(s.old_value);
      if (now == f.address && before == f_next) {  // the frame's push: it starts here
        if (scan.found) return forward_to_own();
        before_push();
        continue;
      }
      // Into: a call made from this frame returning into it, met from its end.
      // The call's line is the frame's line just after the pop: the current line before
      // the first start met, else the previous line.
      RReader::ContextInfo popped = popped_call(tid, s);
      if (!before_frame && ours(st) && popped.function) {
        if (kind == StepKind::Into && popped.has_source &&
            (!scan.found || st[0].line == scan.previous)) {
          w.clear();
          return back_into_callee(tid, before, depth + 1);
        }
        // A call returning into this frame, not stepped into: back over it in one stop.
        if (auto early = back_to_push(tid, before, w)) return *early;
      }
      continue;
    }
    int k = started_frame(s, st, tid);
    if (k != 0) continue;
    if (!before_frame && ours(st) && kind != StepKind::Out) {
      if (scan.before_previous(st[0].line)) return forward_to_own();
      continue;
    }
    // The caller's start of code that made the call: land there, so that a step forward from
    // there steps over (or into) the whole call.
    if (before_frame && st.size() + 1 == depth) {
      if (st.empty() || st[0].line > 0) return landed(s);
      // A caller without source (lapply's C code calling FUN): on out of it, backwards.
      for (uint64_t word : std::vector<uint64_t>(w.words()))
        if (word != g_.srcref && word != g_.context) w.remove(word);
      start = st;
      f = st[0];
      depth = st.size();
      f_next = context(tid, f.address).next;
      kind = StepKind::Out;
      scan = PreviousLineScan{f.line};
      before_frame = false;
    }
  }
}

StopInfo RStepper::back_into_callee(pid_t tid, uint64_t callee, size_t depth) {
  const uint64_t callee_next = context(tid, callee).next;
  StepWatches w(tl_, "R lines");
  w.add(g_.srcref);
  w.add(g_.context);
  w.add(g_.bcpc);
  auto in_callee = [&](const std::vector<InterpFrame>& st) {
    return readable(st) && st.size() == depth && st[0].address == callee;
  };
  auto forward_to = [&](int line) { return forward_to_start(tid, w, callee, depth, line); };
  // Back through the callee's starts (a byte-compiled callee's pc word is known at its
  // bcEval's end, where R_BCpc gets the caller's back): the first is on its last line; the
  // first on another line comes just before that line's run; its push is its start.
  int last = 0;
  for (;;) {
    StopInfo s = tl_.resume_backward(Timeline::WatchStop::AfterWrite);
    if (ends_step(s, w)) return s;
    if (s.reason != StopReason::Watchpoint || s.tid != tid) continue;
    std::vector<InterpFrame> st = stack(tid);
    if (s.addr == g_.bcpc) {
      uint64_t word = word_value(s.old_value);
      if (word && holds(st, callee) && st.size() == depth && !w.watches(word)) {
        w.remove(g_.bcpc);  // a third register for the callee's pc word
        w.add(word);
      }
      continue;
    }
    if (s.addr == g_.context) {
      uint64_t now = word_value(s.new_value), before = word_value(s.old_value);
      if (now == callee && before == callee_next)
        return forward_to(last);  // the callee's push: its whole run was on line `last`
      // A call returning into the callee: back over it in one stop.
      if (in_callee(st) && popped_call(tid, s).function)
        if (auto early = back_to_push(tid, before, w)) return *early;
      continue;
    }
    if (started_frame(s, st, tid) != 0 || !in_callee(st)) continue;
    if (last == 0) {
      last = st[0].line;
    } else if (st[0].line != last) {
      return forward_to(last);
    }
  }
}

}  // namespace rwd
