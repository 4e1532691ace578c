// When the timeline takes checkpoints, and which one a new replay starts from
// (replay_controller.h; the store and its thinning policy: checkpoint_store.h).
#include <algorithm>
#include <cstdio>

#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/replay/buffer_fill.h"
#include "engine/timeline/replay_controller.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

std::optional<ReplayController::Saved> ReplayController::copy_here(bool between) {
  // The copy must not carry breakpoint patches: take them out of the process first (the
  // next sync puts them back).
  for (auto& [rec, t] : session_->tasks())
    if (t.state != TaskState::Exited) bps_.unpatch(t.pid, t.tid);
  auto c = between ? session_->checkpoint_between() : session_->checkpoint();
  if (!c) return std::nullopt;
  Saved s;
  s.event = session_->events_done();
  s.checkpoint = std::move(c);
  s.last_event = last_event_;
  s.entry_pending = entry_pending_;
  s.last_entry_event = last_entry_event_;
  s.cost_ms = checkpoints_.cost_here();
  return s;
}

bool ReplayController::maybe_checkpoint(bool requested) {
  uint64_t n = session_->events_done();
  if (Saved* here = checkpoints_.at(n)) {
    here->pinned |= requested;
    note_hits_at(n, 0);
    return true;
  }
  if (!requested && !checkpoints_.due(n)) return false;
  if (!add_event_checkpoint(requested)) {
    checkpoints_.restart_clock();
    return false;
  }
  note_hits_at(n, 0);
  return true;
}

bool ReplayController::add_event_checkpoint(bool pinned) {
  checkpoints_.pause_clock();  // copying is not replay time (Saved::cost_ms)
  std::optional<Saved> s = copy_here(false);
  checkpoints_.resume_clock();
  if (!s) return false;  // a fork in progress, shared memory...: (ReplaySession::checkpoint)
  s->pinned = pinned;
  checkpoints_.add(std::move(*s), run_.start_event);
  return true;
}

void ReplayController::note_hits_at(uint64_t event, uint64_t inner) {
  if ((after_ == After::ReverseContinue && run_.as<runs::Scan>()) || run_.as<runs::HitNumber>())
    run_.hits_at.push_back({.event = event, .inner = inner, .hits = run_.hits});
}

std::optional<uint64_t> ReplayController::start_after_hits(Run& run, const Run& scan) const {
  for (auto it = scan.hits_at.rbegin(); it != scan.hits_at.rend(); ++it) {
    if (it->hits >= scan.hits) continue;  // the last hit came before it
    if (it->inner ? !inner_.find(it->inner) : !checkpoints_.at(it->event)) continue;  // thinned
    run.start_event = it->event;
    run.inner = it->inner;
    run.count_from = scan.count_from;
    return it->hits;
  }
  return std::nullopt;
}

std::chrono::steady_clock::time_point ReplayController::inner_checkpoint_due(
    const ReplayTask& t) const {
  if (!inner_on_ || pass_blocks_checkpoints() || lifted_ || diversion_ || rep_step_tid_ ||
      t.state == TaskState::Exited)
    return std::chrono::steady_clock::time_point::max();
  return interval_since_ + IntervalCheckpoints::every();
}

bool ReplayController::pass_blocks_checkpoints() const {
  if (!pass_want()) return false;
  const auto* scan = run_.as<runs::Scan>();
  bool late_find = scan && scan->find_by_trap && !scan->count_passes && !pass_trap_.installed() &&
                   run_.arm_after.count() > 0 &&
                   std::chrono::steady_clock::now() < trap_not_before_;
  return !late_find;
}

bool ReplayController::in_buffered_call(const ReplayTask& t, const Registers& r) const {
  // The library's buffered path holds the buffer's header in r12 (preload/entry.S), and its
  // run-in-replay calls are made on the untraced page: from there a replay would have to
  // take up a call half made, with a record read and not yet marked used. The rest of the
  // library (its start-up scan of libc's text runs millions of instructions) is user code
  // like any other: a point there is one the recorder could have stopped at.
  return made_by_library(t, r) || rwd_in_buffered_call_code(r.rip, t.defer_start, t.defer_end);
}

uint64_t ReplayController::take_inner_checkpoint(const ReplayTask& t, bool now) {
  interval_since_ = std::chrono::steady_clock::now();  // refused or taken: not again at once
  if (!inner_on_ || session_->code_patched() || pass_trap_.installed() ||
      (!now && pass_blocks_checkpoints()) || lifted_)
    return 0;
  Registers r;
  if (!try_get_regs(t.tid, r) || bps_.has(t.pid, r.rip)) return 0;
  if (t.syscall_buffer && in_buffered_call(t, r)) return 0;
  // Taking it is not replay time: a window between two of these (Run::arm_after) is
  // estimated by their cost_ms.
  checkpoints_.pause_clock();
  std::optional<Saved> copy = copy_here(true);
  if (!copy) {
    checkpoints_.resume_clock();
    return 0;  // before_resume puts the breakpoints back
  }
  Saved& s = *copy;
  s.between = true;
  s.tid = t.rec_tid;
  s.regs = r;
  s.digest = point_digest(t);
  s.stack_words = stack_words_at(t, r.rsp);
  s.alone = live_tasks() == 1;
  checkpoints_.resume_clock();
  // The next one after as much replay again, not after the time this copy took (a large
  // process's copy can take longer than IntervalCheckpoints::every()).
  interval_since_ = std::chrono::steady_clock::now();
  s.replay = replays_;
  s.prev = inner_.newest_of(replays_, s.event, t.rec_tid);
  if (!s.prev)
    if (const Saved* from = inner_.find(start_inner_);
        from && from->event == s.event && from->tid == s.tid)
      s.prev = start_inner_;
  uint64_t event = s.event;
  uint64_t id = inner_.add(std::move(s), {run_.inner, start_inner_, here_inner_});
  note_hits_at(event, id);
  if (debug_)
    fprintf(stderr, "rewind: timeline: checkpoint %llu inside event %llu's interval at %llx\n",
            (unsigned long long)id, (unsigned long long)session_->events_done(),
            (unsigned long long)r.rip);
  return id;
}

bool ReplayController::request_checkpoint() {
  if (here_.kind != Point::Between || here_.event != session_->events_done()) return false;
  return maybe_checkpoint(true);
}

const ReplayController::Saved* ReplayController::start_for(const Run& run) const {
  // The runs of a reverse step counted from a checkpoint inside the interval start there.
  if (run.inner)
    if (const Saved* s = inner_.find(run.inner)) return s;
  // Steps counted after a hit count hits from the checkpoint the hit was counted from.
  const StepCount* steps = run.step_count();
  if (steps && (steps->after_hit || steps->after_pass)) return checkpoints_.at(run.start_event);
  if (run.forward()) return nullptr;
  // Hits and passes count from the checkpoint the scan counted them from.
  if (run.as<runs::HitNumber>() || run.as<runs::PassCount>() || run.as<runs::PassNumber>())
    return checkpoints_.at(run.start_event);
  if (auto* s = run.as<runs::Steps>()) return checkpoints_.latest_at_most(s->from.event);
  const Point& target = *run.target();  // Goto, Scan
  uint64_t limit = target.events_done();
  if (steps) limit = std::min(limit, steps->event);
  if (auto* s = run.as<runs::Scan>(); s && s->below) limit = std::min(limit, s->below - 1);
  if (run.count_from) limit = std::min(limit, run.count_from);
  return checkpoints_.latest_at_most(limit);
}

CheckpointStats ReplayController::checkpoint_stats() const {
  CheckpointStats st = checkpoints_.stats();
  st.inner = inner_.size();
  st.inner_starts = inner_starts_;
  st.late_watches = late_watches_;
  return st;
}

}  // namespace rwd
