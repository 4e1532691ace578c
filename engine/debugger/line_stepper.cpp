#include "engine/debugger/line_stepper.h"

#include <cstring>

#include "engine/debugger/timeline_target.h"
#include "engine/symbols/unwinder.h"

namespace rwd {

namespace {

/// Guards against a step that never reaches a stop (a loop without line changes would
/// otherwise step forever); far above any real line.
constexpr int kMaxInstructions = 2'000'000;

StopInfo step_stop(const StopInfo& from) {
  StopInfo s = from;
  s.reason = StopReason::Step;
  return s;
}

}  // namespace

StopInfo LineStepper::breakpoint_stop(pid_t tid, uint64_t pc) {
  StopInfo b = tl_.current();
  b.reason = StopReason::Breakpoint;
  b.addr = pc;
  b.tid = tid;
  return b;
}

StopInfo LineStepper::stop_at_user_breakpoint(pid_t tid, uint64_t pc, uint32_t from_line) {
  uint32_t line = 0;
  uint32_t start = row_start_line(pc, &line);
  if (start && start != from_line) return step_stop(tl_.current());
  return breakpoint_stop(tid, pc);
}

LineStepper::Frame LineStepper::frame_of(pid_t tid) {
  TimelineTarget target(tl_, tid);
  Frame f;
  std::vector<PhysicalFrame> phys = unwind_stack(target, modules_, tid, 2);
  if (phys.empty()) return f;
  f.pc = phys[0].pc;
  Module* m = modules_.module_at(f.pc);
  if (!m) {  // mapped since the last look (dlopen, exec)
    modules_.refresh(target);
    m = modules_.module_at(f.pc);
    phys = unwind_stack(target, modules_, tid, 2);
  }
  f.cfa = phys[0].cfa;
  if (!m) return f;
  uint64_t link = m->to_link(f.pc);
  if (DwarfIndex* dw = m->dwarf()) {
    if (const FunctionInfo* fn = dw->function_at(link)) f.entry = m->to_runtime(fn->entry);
    auto row = dw->line_at(link);
    f.has_lines = row && row->second.line != 0;
  }
  if (!f.entry)
    if (const Symbol* s = m->function_at(link)) f.entry = m->to_runtime(s->addr);
  return f;
}

uint32_t LineStepper::row_start_line(uint64_t pc, uint32_t* line) {
  *line = 0;
  Module* m = modules_.module_at(pc);
  DwarfIndex* dw = m ? m->dwarf() : nullptr;
  if (!dw) return 0;
  auto row = dw->line_at(m->to_link(pc));
  if (!row) return 0;
  *line = row->second.line;
  return row->second.addr == m->to_link(pc) && row->second.is_stmt ? row->second.line : 0;
}

StopInfo LineStepper::finish(pid_t tid, Direction dir, const Frame& f) {
  if (!f.cfa) return step_stop(tl_.current());  // the outermost frame: nowhere to go
  if (dir == Direction::Forward) {
    auto bytes = tl_.read_memory(tid, f.cfa - 8, 8);
    if (bytes.size() != 8) return step_stop(tl_.current());
    uint64_t ret;
    memcpy(&ret, bytes.data(), 8);
    TempBreakpoint bp(bps_, tl_, tid, ret);
    for (;;) {
      StopInfo s = tl_.resume_forward();
      if (s.reason != StopReason::Breakpoint) return s;
      if (s.tid == tid && s.addr == ret && tl_.registers(tid).rsp == f.cfa) return step_stop(s);
      if (user_breakpoint(s.tid, s.addr)) return s;
      // The same return address reached by a deeper (recursive) call: keep going.
    }
  }
  // Backward: to the call that made this frame. The call pushed the return address just
  // below the CFA, so the last write to that slot before now is the call instruction itself:
  // a watchpoint there, run backward, stops on it before it runs (whatever way the function
  // was entered: a call, a PLT stub, lazy binding, a tail call).
  uint64_t slot = f.cfa - 8;
  if (tl_.add_watchpoint(slot, 8, WatchKind::Write)) {
    StopInfo s;
    for (;;) {
      s = tl_.resume_backward();
      if (s.reason != StopReason::Breakpoint || user_breakpoint(s.tid, s.addr)) break;
    }
    tl_.remove_watchpoint(slot, 8, WatchKind::Write);
    if (s.reason == StopReason::Watchpoint && s.addr == slot && s.tid == tid) return step_stop(s);
    return s;
  }
  // All debug registers taken: to the function's entry in this same call (rsp there holds
  // the return address, just below the CFA), then one instruction back onto the call.
  if (!f.entry) return step_stop(tl_.current());
  if (f.pc != f.entry) {
    TempBreakpoint bp(bps_, tl_, tid, f.entry);
    for (;;) {
      StopInfo s = tl_.resume_backward();
      if (s.reason != StopReason::Breakpoint) return s;
      if (s.tid == tid && s.addr == f.entry && tl_.registers(tid).rsp == slot) break;
      if (user_breakpoint(s.tid, s.addr)) return s;
    }
  }
  return steps_.backward(tid);
}

StopInfo LineStepper::back_over_callee(pid_t tid, const Frame& callee) {
  if (!callee.cfa) return steps_.backward(tid);  // not unwindable: one instruction at a time
  return finish(tid, Direction::Backward, callee);
}

StopInfo LineStepper::step(pid_t tid, StepKind kind, Direction dir, bool single_thread) {
  only_tid_ = single_thread ? tid : 0;
  StopInfo s = dir == Direction::Forward ? step_forward(tid, kind) : step_backward(tid, kind);
  only_tid_ = 0;
  return s;
}

StopInfo LineStepper::step_forward(pid_t tid, StepKind kind) {
  Frame ref = frame_of(tid);
  if (kind == StepKind::Out) return finish(tid, Direction::Forward, ref);
  uint32_t ref_line = 0;
  row_start_line(ref.pc, &ref_line);
  uint64_t start_pc = ref.pc;
  for (int n = 0; n < kMaxInstructions; ++n) {
    StopInfo s = steps_.forward(tid);
    if (done(s)) return s;
    Frame f = frame_of(tid);
    if (f.cfa && ref.cfa && f.cfa < ref.cfa) {  // entered a called function
      if (kind == StepKind::Into && f.has_lines && f.entry == f.pc) {
        Module* m = modules_.module_at(f.pc);
        const FunctionInfo* fn = m->dwarf()->function_at(m->to_link(f.pc));
        uint64_t body = fn ? m->to_runtime(m->dwarf()->after_prologue(*fn)) : f.pc;
        while (tl_.registers(tid).rip != body) {
          StopInfo t = steps_.forward(tid);
          if (done(t)) return t;
          if (frame_of(tid).cfa != f.cfa) break;  // the prologue called out: stop here
        }
        return step_stop(tl_.current());
      }
      s = finish(tid, Direction::Forward, f);
      if (done(s)) return s;
      f = frame_of(tid);  // back in this frame, after the call: maybe at a new line's start
    } else if (f.cfa && ref.cfa && f.cfa > ref.cfa) {  // returned into the caller
      if (!f.has_lines) {  // no line information there: run until it returns too
        s = finish(tid, Direction::Forward, f);
        if (done(s)) return s;
        f = frame_of(tid);
      }
      ref = f;
      uint32_t line = 0;
      // At the start of a line (the call was its caller's last instruction): stop; in the
      // middle of the calling line: go on to the next line, as gdb does.
      if (row_start_line(f.pc, &line)) return step_stop(s);
      ref_line = line;
      continue;
    }
    if (f.pc != start_pc && user_bp_(tid, f.pc))
      return stop_at_user_breakpoint(tid, f.pc, ref_line);
    uint32_t line = 0, start = row_start_line(f.pc, &line);
    if (start && start != ref_line) return step_stop(tl_.current());
  }
  return step_stop(tl_.current());
}

StopInfo LineStepper::step_backward(pid_t tid, StepKind kind) {
  Frame ref = frame_of(tid);
  if (kind == StepKind::Out) return finish(tid, Direction::Backward, ref);
  // A frame that cannot be unwound (the loader's _start: no CFI, no line information) has
  // no callee or caller to tell apart: one instruction back, instead of a search for the
  // start of a line run that never ended.
  if (!ref.cfa) return steps_.backward(tid);
  uint32_t start_line = 0;
  row_start_line(ref.pc, &start_line);
  uint64_t start_pc = ref.pc;
  uint32_t target = 0;  // the line whose first row this step goes back to (0: not found yet)
  bool overshot = false, step = true;
  bool entered = false;  // went into a callee (reverse-step enters one, as gdb's does)
  for (int n = 0; n < kMaxInstructions && !overshot; ++n) {
    if (step) {
      uint64_t event = tl_.current().event;
      Registers regs = tl_.registers(tid);
      StopInfo s = steps_.backward(tid);
      if (done(s)) return s;
      // A step that did not move (same event, same registers: the start of the recording,
      // or an engine fault) would repeat for ever: stop here.
      Registers now = tl_.registers(tid);
      if (s.event == event && std::memcmp(&regs, &now, sizeof regs) == 0) return step_stop(s);
    }
    step = true;
    Frame f = frame_of(tid);
    if (f.cfa && ref.cfa && f.cfa < ref.cfa) {  // back into a callee, at its return
      if (kind == StepKind::Into && f.has_lines && !entered) {
        ref = f;         // reverse-step: into the callee, to its last line; calls made on that line
        entered = true;  // are stepped back over
        row_start_line(f.pc, &target);
        continue;
      }
      StopInfo s = back_over_callee(tid, f);
      if (done(s)) return s;
      step = false;  // look again: a tail call leaves us in another callee
      continue;
    }
    if (f.cfa && ref.cfa && f.cfa > ref.cfa) {  // back out of the entry, into the caller
      if (target) {
        overshot = true;
        break;
      }
      ref = f;
      row_start_line(f.pc, &target);
      continue;
    }
    if (f.pc != start_pc && user_bp_(tid, f.pc))
      return stop_at_user_breakpoint(tid, f.pc, start_line);
    uint32_t line = 0;
    row_start_line(f.pc, &line);
    if (line == 0) continue;
    if (!target) {
      if (line != start_line) target = line;
    } else if (line != target) {
      overshot = true;  // one instruction before the run of `target`
    }
  }
  if (!overshot) return step_stop(tl_.current());
  // Forward again to the first is_stmt row of `target` in the frame: where next would stop.
  // Optimized code (a -O2 library) may have none in this run of the line: then back to the
  // run's first instruction, where gdb's reverse-step stops too.
  bool step_fwd = true;
  uint64_t run_start = 0;  // the pc of the run's first instruction, once passed
  for (int n = 0; n < kMaxInstructions; ++n) {
    StopInfo s = tl_.current();
    if (step_fwd) {
      s = steps_.forward(tid);
      if (done(s)) return s;
    }
    step_fwd = true;
    Frame f = frame_of(tid);
    if (f.cfa && ref.cfa && f.cfa < ref.cfa) {
      s = finish(tid, Direction::Forward, f);
      if (done(s)) return s;
      step_fwd = false;
      continue;
    }
    uint32_t line = 0;
    if (f.cfa == ref.cfa && row_start_line(f.pc, &line) == target) return step_stop(s);
    if (f.cfa == ref.cfa && line == target) {
      if (!run_start) run_start = f.pc;
      continue;
    }
    // Out of the frame, or on another line: the run had no is_stmt row.
    return run_start ? back_to(tid, run_start, ref) : step_stop(s);
  }
  return step_stop(tl_.current());
}

StopInfo LineStepper::back_to(pid_t tid, uint64_t pc, const Frame& frame) {
  for (int n = 0; n < kMaxInstructions; ++n) {
    StopInfo s = steps_.backward(tid);
    if (done(s)) return s;
    Frame f = frame_of(tid);
    if (f.cfa && frame.cfa && f.cfa < frame.cfa) {  // back into a callee the run called
      s = back_over_callee(tid, f);
      if (done(s)) return s;
      f = frame_of(tid);
    }
    if (f.pc == pc && f.cfa == frame.cfa) return step_stop(s);
  }
  return step_stop(tl_.current());
}

}  // namespace rwd
