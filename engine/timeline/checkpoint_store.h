// The timeline's checkpoints and the policy for taking and thinning them (docs/how-it-works.md,
// "Checkpoints").
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

#include "engine/replay/replay_session.h"
#include "engine/timeline/timeline_types.h"
#include "engine/trace/event.h"

namespace rwd {

/// Checkpoints ordered by event. Not thread-safe (the timeline's replay thread owns it).
class CheckpointStore {
 public:
  /// A checkpoint and what the timeline needs to resume there.
  struct Saved {
    uint64_t event = 0;  ///< taken just after this event
    ReplaySession::CheckpointPtr checkpoint;
    Event last_event;     ///< that event
    bool pinned = false;  ///< asked for by the user: never thinned
    /// The timeline's record of syscall entries at that event (Timeline's entry_pending_,
    /// last_entry_event_).
    std::map<pid_t, uint64_t> entry_pending;
    uint64_t last_entry_event = 0;
  };
  using Clock = std::chrono::steady_clock;
  static constexpr uint64_t kEvents = 1000;                     ///< at most this many events apart
  static constexpr auto kTime = std::chrono::milliseconds(25);  ///< or this much replay apart
  static constexpr size_t kMax = 48;                            ///< kept, besides pinned ones

  /// Whether one is due just after event `n`: none at or before it within kEvents events, or
  /// kTime of replay since the last one was taken (or since restart_clock()).
  bool due(uint64_t n) const;
  /// Adds `s` and thins to kMax: every second one in the older half goes (recent history
  /// stays dense), except pinned ones and the one at `keep_event`.
  void add(Saved s, uint64_t keep_event);
  /// The latest at or before `event`, or nullptr.
  const Saved* latest_at_most(uint64_t event) const;
  /// The one taken just after `event`, or nullptr.
  Saved* at(uint64_t event);
  const Saved* at(uint64_t event) const;
  /// Starts the replay-time measure over (a new replay starts).
  void restart_clock() { since_ = Clock::now(); }
  size_t size() const { return saved_.size(); }
  void clear() { saved_.clear(); }
  /// Counts, pids and events, for benchmarks and tests.
  CheckpointStats stats() const;

 private:
  std::vector<Saved> saved_;
  Clock::time_point since_ = Clock::now();
};

}  // namespace rwd
