// The timeline's checkpoints and the policy for taking and thinning them (docs/how-it-works.md,
// "Checkpoints").
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <vector>

#include "engine/arch/registers.h"
#include "engine/replay/replay_session.h"
#include "engine/ticks/memory_digest.h"
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
    /// Replay time from the trace's start to here (ms), estimated: the replay that took it
    /// started from a checkpoint with its own estimate (or the start, 0) and ran this long.
    double cost_ms = 0;
    uint64_t seq = 0;  ///< the store's count of checkpoints added before it (newest: highest)
    // Checkpoints inside an event interval (IntervalCheckpoints) only:
    bool between = false;  ///< taken between `event` and the next, with task `tid` running
    pid_t tid = 0;         ///< the task running in that interval (recorded tid)
    Registers regs{};      ///< its registers there
    /// Its process's memory there, dead stacks left out (ReplayController::point_digest): a
    /// scan that ends at this point finds it again by registers and digest.
    MemoryDigest digest{};
    bool alone = false;                 ///< `tid` was the only live task (Point::alone)
    std::vector<uint64_t> stack_words;  ///< its stack from rsp up (Scan::stack_words)
    uint64_t id = 0;                    ///< IntervalCheckpoints' name for it (from 1)
    uint64_t prev = 0;    ///< an earlier one known to lie before it in the interval (0: none)
    uint64_t replay = 0;  ///< the replay that took it (ReplayController's count of replays)
  };
  using Clock = std::chrono::steady_clock;
  static constexpr uint64_t kEvents = 1000;                     ///< at most this many events apart
  static constexpr auto kTime = std::chrono::milliseconds(25);  ///< or this much replay apart
  static constexpr size_t kMax = 48;                            ///< kept, besides pinned ones
  static constexpr size_t kRecent = 12;  ///< the newest ones added, never thinned

  /// Whether one is due just after event `n`: none at or before it within kEvents events, or
  /// every() of replay since the last one was taken (or since restart_clock()).
  bool due(uint64_t n) const;
  /// The replay time between checkpoints: kTime, or REWIND_CHECKPOINT_MS milliseconds (0: one
  /// after every event where one can be taken; tests use it to make under load what the
  /// clock makes there: checkpoints at other events than on an idle machine).
  static std::chrono::milliseconds every();
  /// Adds `s` and thins to kMax. Kept: pinned ones, the one at `keep_event`, the kRecent
  /// newest (where the user works, the last operations left them dense) and the latest in
  /// the trace; of the others, the one whose two neighbours lie nearest in replay time
  /// (cost_ms) goes first, so that what stays is spread evenly over the replayed part of the
  /// trace and a seek anywhere replays about the same from its nearest checkpoint.
  void add(Saved s, uint64_t keep_event);
  /// The latest at or before `event`, or nullptr.
  const Saved* latest_at_most(uint64_t event) const;
  /// The one taken just after `event`, or nullptr.
  Saved* at(uint64_t event);
  const Saved* at(uint64_t event) const;
  /// Starts the replay-time measure over (no checkpoint could be taken where one was due).
  void restart_clock() { since_ = Clock::now(); }
  /// A replay starts from `from` (nullptr: the trace's start): both replay-time measures
  /// start there.
  void begin_replay(const Saved* from);
  /// The replay waits for the user (a pause) and goes on: the time between is not replay.
  void pause_clock();
  void resume_clock();
  /// The current point's replay time from the trace's start (ms), estimated (Saved::cost_ms).
  double cost_here() const;
  size_t size() const { return saved_.size(); }
  void clear() { saved_.clear(); }
  /// Counts, pids and events, for benchmarks and tests.
  CheckpointStats stats() const;

 private:
  /// Drops unpinned ones until kMax are left, by add()'s rule.
  void thin(uint64_t keep_event);

  std::vector<Saved> saved_;
  Clock::time_point since_ = Clock::now();
  Clock::time_point replay_start_ = Clock::now();  ///< paused time excluded
  Clock::time_point paused_at_{};                  ///< set while paused
  double start_cost_ = 0;                          ///< the replay's start checkpoint's cost_ms
  uint64_t next_seq_ = 0;
};

/// Whether the timeline takes checkpoints inside event intervals (IntervalCheckpoints): on
/// unless REWIND_INTERVAL_CHECKPOINTS=0 (to compare, or to rule them out when a backward
/// operation misbehaves).
bool interval_checkpoints_enabled();

/// Checkpoints inside event intervals: taken while a task runs for long between two events
/// (a loop without syscalls), so that a backward operation near a point far from the last
/// event replays from one of these instead of from the event (DESIGN.md: the cost of a
/// backward operation must not grow with the instructions since the last event). Without
/// counters nothing orders two points of an interval, so each checkpoint is known to lie
/// before the points the replay that took it reached later, and before those of replays
/// started from it; `prev` chains to the one it was known to follow. Keeps kMax (add()).
class IntervalCheckpoints {
 public:
  using Saved = CheckpointStore::Saved;
  static constexpr size_t kMax = 24;
  static constexpr size_t kRecent = 4;  ///< the newest ones, never dropped
  /// Replay time between two of them, in one interval (the interrupt's poll adds up to 20 ms):
  /// 30 ms, or REWIND_INTERVAL_CHECKPOINT_MS (tests take them far more often).
  static std::chrono::milliseconds every();

  /// Adds `s` (event, tid, regs, prev, replay, cost_ms set), names it and returns its id.
  /// Beyond kMax one goes, never one named in `keep` nor the kRecent newest: the oldest of
  /// another interval than the newest one's (the user works in that one) if any, else of
  /// that interval the one whose neighbours in it lie nearest in replay time (cost_ms), so
  /// that those kept stay spread over it. A dropped one's successors (`prev` naming it) take
  /// its `prev`: what lies before it lies before them too.
  uint64_t add(Saved s, std::initializer_list<uint64_t> keep);
  /// The one named `id`, or nullptr (never taken, or dropped).
  const Saved* find(uint64_t id) const;
  /// The newest one taken by replay `replay` in task `tid`'s interval after event `event`, or 0.
  uint64_t newest_of(uint64_t replay, uint64_t event, pid_t tid) const;
  size_t size() const { return saved_.size(); }
  /// Every one kept, oldest first.
  const std::vector<Saved>& all() const { return saved_; }
  void clear() { saved_.clear(); }

 private:
  /// The index of the one add() drops, or size() when none may go.
  size_t to_drop(std::initializer_list<uint64_t> keep) const;

  std::vector<Saved> saved_;  ///< oldest first
  uint64_t next_id_ = 1;
};

}  // namespace rwd
