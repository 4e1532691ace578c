#include "engine/debugger/recording_query.h"

#include "engine/errors.h"

namespace rwd {

void RecordingQuery::interrupt() {
  interrupted_ = true;
  if (Timeline* t = running_.load()) t->interrupt();
}

RecordingQuery::Run::Run(RecordingQuery& q, uint64_t first, uint64_t last, QueryProgress progress)
    : q_(q), tl_(q.trace_dir_), last_(last), progress_(std::move(progress)) {
  q_.running_ = &tl_;  // (an interrupt() that came before is kept: next() sees it)
  event_ = (first > 1 ? tl_.seek(first) : tl_.current()).event;
  if (progress_) progress_(event_, 0);
}

RecordingQuery::Run::~Run() {
  q_.running_ = nullptr;
}

bool RecordingQuery::Run::at_limit(size_t found) {
  if (!q_.interrupted_ && found < kMaxResults) return false;
  complete_ = false;
  truncated_ = found >= kMaxResults;
  return true;
}

std::optional<StopInfo> RecordingQuery::Run::next(size_t found) {
  if (at_limit(found)) return std::nullopt;
  StopInfo s = tl_.resume_forward();
  if (!take(s, found)) return std::nullopt;
  return s;
}

std::optional<DebugStop> RecordingQuery::Run::next(Debugger& d, size_t found) {
  if (at_limit(found)) return std::nullopt;
  DebugStop s = d.resume(Direction::Forward);
  if (!take(s.stop, found)) return std::nullopt;
  return s;
}

bool RecordingQuery::Run::take(const StopInfo& s, size_t found) {
  if (s.event != event_) {
    if (progress_ && s.event / 1000 != event_ / 1000) progress_(s.event, found);
    event_ = s.event;
    ordinal_ = 0;
  }
  if (s.reason == StopReason::Interrupted || q_.interrupted_) complete_ = false;
  return !((last_ && s.event > last_) || run_ended(s) || !complete_);
}

PositionSplit::PositionSplit(Timeline& tl, const TimelinePosition& p, std::optional<CodeSite> site,
                             const std::optional<CodeSite>& shared)
    : tl_(tl), p_(p), rip_(p.regs.rip) {
  if (p_.kind != TimelinePosition::Trap || !site) return;
  owned_ = site != shared;
  site_ = std::move(site);
  uint64_t now = tl_.current().event;
  if (now == p_.event)
    arm();
  else if (now < p_.event)
    tl_.set_stop_after_event(p_.event);
}

PositionSplit::~PositionSplit() {
  disarm();
  tl_.set_stop_after_event(0);
}

void PositionSplit::arm() {
  if (owned_ && !armed_) tl_.add_breakpoint(*site_);
  armed_ = true;
}

void PositionSplit::disarm() {
  if (owned_ && armed_) tl_.remove_breakpoint(*site_);
  armed_ = false;
}

bool PositionSplit::after(const StopInfo& s) {
  if (p_.kind == TimelinePosition::Between) return s.event >= p_.event;
  if (s.event != p_.event || p_.kind == TimelinePosition::Entry || !site_) {
    if (s.event > p_.event) disarm();
    return s.event > p_.event;
  }
  if (passed_) return true;
  if (s.reason == StopReason::Seek) {
    arm();  // just after the position's event: its interval begins
    return false;
  }
  passed_ = reached(s);  // this stop is the position: those after it are after
  return false;
}

bool PositionSplit::reached(const StopInfo& s) {
  // The breakpoint's stop, or another stop that left the task on that instruction (a
  // watchpoint's, just after the write before it: the breakpoint is then passed unreported).
  if (s.tid != p_.tid || s.event != p_.event ||
      !((s.reason == StopReason::Breakpoint && s.addr == rip_) ||
        tl_.registers(s.tid).rip == rip_) ||
      !tl_.at_position(p_))
    return false;
  disarm();
  return true;
}

StopInfo find_counted_stop(Timeline& tl, uint64_t event, uint32_t ordinal,
                           const std::function<bool(const StopInfo&)>& counts) {
  StopInfo s = tl.seek(event);
  if (s.event != event)
    throw Error("event " + std::to_string(event) + " cannot be reached in this replay");
  for (uint32_t seen = 0; seen < ordinal;) {
    s = tl.resume_forward();
    if (run_ended(s) || s.event != event) break;
    if (counts(s)) ++seen;
  }
  return s;
}

}  // namespace rwd
