// Reverse continue and reverse step (DESIGN.md "Checkpoints and reverse execution"): a scan
// replays from a checkpoint to the current point counting hits or steps, then a second
// replay goes to the last hit or the step before (replay_controller.h).
#include <cstdio>
#include <utility>

#include "engine/errors.h"
#include "engine/os/tracee_memory.h"
#include "engine/ticks/memory_digest.h"
#include "engine/timeline/replay_controller.h"
#include "engine/trace/buffered_records.h"

namespace rwd {

void ReplayController::op_reverse_continue(Timeline::WatchStop at) {
  interrupt_ = false;
  reverse_watch_stop_ = at;
  start_scan(After::ReverseContinue, false);
}

void ReplayController::op_reverse_step(pid_t tid) {
  end_diversion();
  step_tid_ = tid;
  if (here_.kind != Point::Entry || here_.tid != tid) {
    auto it = entry_pending_.find(tid);
    const ReplayTask* t = live(tid);
    if (it != entry_pending_.end() && t && t->at_entry) {
      // The task waits in a syscall it entered at an earlier event while others ran: it
      // stands at that entry (the same state), and steps back from there.
      Point entry;
      entry.kind = Point::Entry;
      entry.event = it->second;
      entry.tid = tid;
      here_ = entry;
    }
  }
  if (here_.kind == Point::Entry && here_.tid == tid) {
    // Before a syscall: the previous instruction ran between the last event and this one.
    start_scan(After::ReverseStep, true);
    return;
  }
  if (here_.kind == Point::Between && here_.event > 1) {
    const Event* last = &last_event_;
    if (last->kind == EventKind::Syscall && last->tid == tid) {
      // Just after a syscall: one instruction back is that syscall's entry.
      Run r;
      r.kind = Run::Goto;
      r.target = entry_of_last_syscall(tid, here_.event);
      r.report.reason = StopReason::Step;
      r.report.tid = tid;
      run_ = r;
      throw Restart{};
    }
    if (last->kind == EventKind::Signal && last->tid == tid) {
      // At a signal handler's first instruction: one instruction back is where the signal
      // arrived, in the run that led to the signal event.
      step_from_ = here_.event - 1;
    }
  }
  start_scan(After::ReverseStep, true);
}

Point ReplayController::entry_of_last_syscall(pid_t tid, uint64_t n) const {
  Point p;
  p.kind = Point::Entry;
  p.event = last_entry_event_ ? last_entry_event_ : n;
  p.tid = tid;
  return p;
}

uint32_t ReplayController::buffer_pos(pid_t rec_tid) const {
  const ReplayTask* t = live(rec_tid);
  if (!t || !t->syscall_buffer || !session_->can_pause_buffer(rec_tid)) return 0;
  uint32_t pos = 0;
  read_memory_exact(t->tid, t->syscall_buffer, &pos, sizeof pos);
  return pos;
}

void ReplayController::start_scan(After after, bool count_steps, uint64_t after_hit) {
  if (debug_)
    fprintf(stderr, "rewind: timeline: scan to point kind %d event %llu rip %llx\n",
            int(here_.kind), (unsigned long long)here_.event, (unsigned long long)here_.regs.rip);
  Run r;
  r.kind = Run::Scan;
  r.target = here_;
  r.after_write =
      after == After::ReverseContinue && reverse_watch_stop_ == Timeline::WatchStop::AfterWrite;
  if (here_.kind == Point::Trap) {
    const ReplayTask* t = live(here_.tid);
    if (!t) throw Error("the current task is gone");
    r.target.digest = digest_memory(t->tid);
    // A counting scan single-steps the task from where the target can first be, checking
    // each step; a breakpoint would only stop it at every earlier pass (thousands, in a
    // loop making buffered syscalls).
    if (!count_steps) {
      internal_bp_ = site_in(t->pid, here_.regs.rip);
      bps_.add_internal(*internal_bp_);
    }
  }
  if (count_steps) {
    r.count_steps = true;
    r.tid = step_tid_;
    r.event = here_.kind == Point::Entry ? here_.event - 1 : here_.event;
    if (step_from_) {
      // Back from a signal's handler into the run before the signal event, which used all
      // of that event's buffered records.
      r.event = *std::exchange(step_from_, std::nullopt);
      if (session_->can_pause_buffer(r.tid)) r.pos = buffered_bytes_used(last_event_.buffered);
    } else if (after_hit) {
      r.after_hit = after_hit;
      r.start_event = run_.start_event;
    } else if (here_.kind != Point::Between) {
      r.pos = buffer_pos(r.tid);
    }
  }
  after_ = after;
  run_ = r;
  throw Restart{};
}

void ReplayController::interrupt_reverse_continue() {
  if (internal_bp_) {
    bps_.remove_internal(*internal_bp_);
    internal_bp_.reset();
  }
  Run next;
  next.kind = Run::Goto;
  next.target.kind = Point::Between;
  next.target.event = run_.below;
  next.report.reason = StopReason::Interrupted;
  after_ = After::None;
  run_ = next;
  throw Restart{};
}

void ReplayController::scan_done() {
  Run done = run_;
  std::optional<CodeSite> internal = internal_bp_;
  if (debug_)
    fprintf(stderr, "rewind: timeline: scan reached event %llu: %llu hits, %llu steps\n",
            (unsigned long long)session_->events_done(), (unsigned long long)done.hits,
            (unsigned long long)done.steps);
  if (internal_bp_) {
    bps_.remove_internal(*internal_bp_);
    internal_bp_.reset();
  }
  Run next;
  if (after_ == After::ReverseContinue && done.hits == 0 && done.start_event > 0) {
    // No hit between the checkpoint and now: look further back.
    Run again = done;
    again.below = done.start_event;
    again.hits = 0;
    again.last_hit_info.reset();
    if (internal) {  // the same target: the same site
      internal_bp_ = internal;
      bps_.add_internal(*internal);
    }
    run_ = again;
    throw Restart{};
  }
  if (after_ == After::ReverseContinue) {
    if (done.hits == 0) {
      next.kind = Run::Goto;
      next.target.kind = Point::Between;
      next.target.event = 1;
      next.report.reason = StopReason::TraceStart;
    } else {
      next.kind = Run::HitNumber;
      next.after_write = done.after_write;
      next.count = done.hits;
      next.report = *done.last_hit_info;
      next.start_event = done.start_event;
    }
  } else {  // ReverseStep: single-step to one instruction before the current point
    if (done.steps == 0 && last_event_.kind == EventKind::Syscall && last_event_.tid == done.tid &&
        last_event_.number == done.event && done.event > 1) {
      // Nothing ran between the task's syscall and the target (a signal delivered as the
      // syscall returned): one instruction back is that syscall's entry.
      next.kind = Run::Goto;
      next.target = entry_of_last_syscall(done.tid, done.event);
      next.report.reason = StopReason::Step;
      next.report.tid = done.tid;
    } else if (done.steps == 0 && last_event_.kind == EventKind::Signal &&
               last_event_.tid == done.tid && last_event_.number == done.event && done.event > 1) {
      // At a signal handler's first instruction, reached by a step: one instruction back is
      // where the signal arrived, in the run before the signal event (op_reverse_step does
      // the same from the point just after that event).
      Run again;
      again.kind = Run::Scan;
      again.count_steps = true;
      again.tid = done.tid;
      again.event = done.event - 1;
      again.target.kind = Point::Between;
      again.target.event = done.event;
      if (session_->can_pause_buffer(done.tid))
        again.pos = buffered_bytes_used(last_event_.buffered);
      run_ = again;  // after_ stays ReverseStep
      throw Restart{};
    } else if (done.steps == 0) {
      next.kind = Run::Goto;
      next.target.kind = Point::Between;
      next.target.event = done.event;
      next.report.reason = done.event <= 1 ? StopReason::TraceStart : StopReason::Step;
      next.report.tid = done.tid;
    } else {
      next.kind = Run::Steps;
      next.tid = done.tid;
      next.event = done.event;
      next.pos = done.pos;
      next.after_hit = done.after_hit;
      next.start_event = done.start_event;
      next.count = done.steps - 1;
      next.report.reason = StopReason::Step;
      next.report.tid = done.tid;
    }
    if (final_report_) next.report = *std::exchange(final_report_, std::nullopt);
  }
  after_ = After::None;
  run_ = next;
  throw Restart{};
}

}  // namespace rwd
