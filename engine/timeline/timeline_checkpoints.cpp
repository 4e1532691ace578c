// When the timeline takes checkpoints, and which one a new replay starts from
// (replay_controller.h; the store and its thinning policy: checkpoint_store.h).
#include <algorithm>

#include "engine/timeline/replay_controller.h"

namespace rwd {

bool ReplayController::maybe_checkpoint(bool requested) {
  uint64_t n = session_->events_done();
  if (Saved* here = checkpoints_.at(n)) {
    here->pinned |= requested;
    return true;
  }
  if (!requested && !checkpoints_.due(n)) return false;
  // The copy must not carry breakpoint patches: take them out of the process first.
  for (auto& [rec, t] : session_->tasks())
    if (t.state != TaskState::Exited) bps_.unpatch(t.pid, t.tid);
  auto c = session_->checkpoint();
  if (!c) {  // a fork in progress, shared memory...: no checkpoint (ReplaySession::checkpoint)
    checkpoints_.restart_clock();
    return false;
  }
  Saved s;
  s.event = n;
  s.pinned = requested;
  s.checkpoint = std::move(c);
  s.last_event = last_event_;
  s.entry_pending = entry_pending_;
  s.last_entry_event = last_entry_event_;
  checkpoints_.add(std::move(s), run_.start_event);
  return true;
}

bool ReplayController::request_checkpoint() {
  if (here_.kind != Point::Between || here_.event != session_->events_done()) return false;
  return maybe_checkpoint(true);
}

const ReplayController::Saved* ReplayController::start_for(const Run& run) const {
  // Steps counted after a hit count hits from the checkpoint the hit was counted from.
  const StepCount* steps = run.step_count();
  if (steps && (steps->after_hit || steps->after_pass)) return checkpoints_.at(run.start_event);
  if (run.forward()) return nullptr;
  // Hits and passes count from the checkpoint the scan counted them from.
  if (run.as<runs::HitNumber>() || run.as<runs::PassCount>() || run.as<runs::PassNumber>())
    return checkpoints_.at(run.start_event);
  if (auto* s = run.as<runs::Steps>()) return checkpoints_.latest_at_most(s->from.event);
  const Point& target = *run.target();  // Goto, Scan
  uint64_t limit = target.kind == Point::Entry ? target.event - 1 : target.event;
  if (steps) limit = std::min(limit, steps->event);
  if (auto* s = run.as<runs::Scan>(); s && s->below) limit = std::min(limit, s->below - 1);
  return checkpoints_.latest_at_most(limit);
}

CheckpointStats ReplayController::checkpoint_stats() const {
  return checkpoints_.stats();
}

}  // namespace rwd
