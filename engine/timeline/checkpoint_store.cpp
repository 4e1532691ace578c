#include "engine/timeline/checkpoint_store.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace rwd {

bool CheckpointStore::due(uint64_t n) const {
  const Saved* before = latest_at_most(n);
  return !before || n - before->event >= kEvents || Clock::now() - since_ >= every();
}

void CheckpointStore::add(Saved s, uint64_t keep_event) {
  since_ = Clock::now();
  s.seq = next_seq_++;
  auto pos = std::upper_bound(saved_.begin(), saved_.end(), s.event,
                              [](uint64_t e, const Saved& x) { return e < x.event; });
  saved_.insert(pos, std::move(s));
  thin(keep_event);
}

void CheckpointStore::thin(uint64_t keep_event) {
  for (;;) {
    size_t unpinned = 0;
    for (auto& x : saved_) unpinned += !x.pinned;
    if (unpinned <= kMax) return;
    // Sequence numbers at or above this one are among the kRecent newest.
    uint64_t recent = next_seq_ > kRecent ? next_seq_ - kRecent : 0;
    size_t drop = saved_.size();
    double nearest = 0;
    for (size_t i = 0; i + 1 < saved_.size(); ++i) {  // (the latest in the trace stays)
      const Saved& x = saved_[i];
      if (x.pinned || x.event == keep_event || x.seq >= recent) continue;
      double gap = saved_[i + 1].cost_ms - (i ? saved_[i - 1].cost_ms : 0.0);
      if (drop == saved_.size() || gap < nearest) {
        drop = i;
        nearest = gap;
      }
    }
    if (drop == saved_.size()) return;  // only kept ones (cannot happen: kRecent + 2 < kMax)
    saved_.erase(saved_.begin() + long(drop));
  }
}

void CheckpointStore::begin_replay(const Saved* from) {
  since_ = replay_start_ = Clock::now();
  paused_at_ = {};
  start_cost_ = from ? from->cost_ms : 0;
}

void CheckpointStore::pause_clock() {
  if (paused_at_ == Clock::time_point{}) paused_at_ = Clock::now();
}

void CheckpointStore::resume_clock() {
  if (paused_at_ == Clock::time_point{}) return;
  auto paused = Clock::now() - paused_at_;
  since_ += paused;
  replay_start_ += paused;
  paused_at_ = {};
}

double CheckpointStore::cost_here() const {
  auto now = paused_at_ == Clock::time_point{} ? Clock::now() : paused_at_;
  return start_cost_ + std::chrono::duration<double, std::milli>(now - replay_start_).count();
}

const CheckpointStore::Saved* CheckpointStore::latest_at_most(uint64_t event) const {
  const Saved* best = nullptr;
  for (auto& s : saved_)
    if (s.event <= event) best = &s;
  return best;
}

CheckpointStore::Saved* CheckpointStore::at(uint64_t event) {
  for (auto& s : saved_)
    if (s.event == event) return &s;
  return nullptr;
}

const CheckpointStore::Saved* CheckpointStore::at(uint64_t event) const {
  return const_cast<CheckpointStore*>(this)->at(event);
}

CheckpointStats CheckpointStore::stats() const {
  CheckpointStats st;
  st.count = saved_.size();
  for (auto& s : saved_) {
    st.events.push_back(s.event);
    for (pid_t p : ReplaySession::checkpoint_pids(*s.checkpoint)) st.pids.push_back(p);
  }
  return st;
}

namespace {
/// Milliseconds from environment variable `name` when it holds a number of at least `least`,
/// else `fallback`.
std::chrono::milliseconds env_ms(const char* name, long least, std::chrono::milliseconds fallback) {
  const char* v = getenv(name);
  char* end = nullptr;
  long n = v && *v ? strtol(v, &end, 10) : -1;
  return end && *end == 0 && n >= least ? std::chrono::milliseconds(n) : fallback;
}
}  // namespace

std::chrono::milliseconds CheckpointStore::every() {
  static const std::chrono::milliseconds ms = env_ms("REWIND_CHECKPOINT_MS", 0, kTime);
  return ms;
}

std::chrono::milliseconds IntervalCheckpoints::every() {
  static const std::chrono::milliseconds ms =
      env_ms("REWIND_INTERVAL_CHECKPOINT_MS", 1, std::chrono::milliseconds(30));
  return ms;
}

uint64_t IntervalCheckpoints::add(Saved s, std::initializer_list<uint64_t> keep) {
  s.id = next_id_++;
  uint64_t id = s.id;
  saved_.push_back(std::move(s));
  while (saved_.size() > kMax) {
    size_t i = to_drop(keep);
    if (i == saved_.size()) break;
    for (Saved& x : saved_)
      if (x.prev == saved_[i].id) x.prev = saved_[i].prev;
    saved_.erase(saved_.begin() + long(i));
  }
  return id;
}

size_t IntervalCheckpoints::to_drop(std::initializer_list<uint64_t> keep) const {
  const Saved& newest = saved_.back();
  auto droppable = [&](size_t i) {
    return i + kRecent < saved_.size() &&
           std::find(keep.begin(), keep.end(), saved_[i].id) == keep.end();
  };
  auto same_interval = [&](const Saved& a) {
    return a.event == newest.event && a.tid == newest.tid;
  };
  for (size_t i = 0; i < saved_.size(); ++i)  // oldest first
    if (droppable(i) && !same_interval(saved_[i])) return i;
  size_t drop = saved_.size();
  double nearest = 0;
  for (size_t i = 0; i < saved_.size(); ++i) {
    if (!droppable(i)) continue;
    // Its neighbours in the interval by replay time (the event's own checkpoint at 0 below).
    double below = 0, above = -1;
    for (const Saved& x : saved_) {
      if (&x == &saved_[i] || !same_interval(x)) continue;
      if (x.cost_ms <= saved_[i].cost_ms) below = std::max(below, x.cost_ms);
      if (x.cost_ms > saved_[i].cost_ms && (above < 0 || x.cost_ms < above)) above = x.cost_ms;
    }
    if (above < 0) continue;  // the latest in the interval stays
    if (drop == saved_.size() || above - below < nearest) {
      drop = i;
      nearest = above - below;
    }
  }
  return drop;
}

const IntervalCheckpoints::Saved* IntervalCheckpoints::find(uint64_t id) const {
  for (auto& s : saved_)
    if (s.id == id) return &s;
  return nullptr;
}

uint64_t IntervalCheckpoints::newest_of(uint64_t replay, uint64_t event, pid_t tid) const {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it)
    if (it->replay == replay && it->event == event && it->tid == tid) return it->id;
  return 0;
}

bool interval_checkpoints_enabled() {
  const char* e = getenv("REWIND_INTERVAL_CHECKPOINTS");
  return !e || std::string(e) != "0";
}

}  // namespace rwd
