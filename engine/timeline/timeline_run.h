// What one replay of the timeline is for (the run), and the places it looks for (points).
// Internal to engine/timeline.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "engine/arch/registers.h"
#include "engine/os/debug_registers.h"
#include "engine/ticks/memory_digest.h"
#include "engine/timeline/timeline_types.h"

namespace rwd {

/// A place in the trace the engine can find again in a new replay. Between(n): just after
/// event n. Entry(n): the task of event n at that syscall's entry, before it is replayed.
/// Trap(n): task `tid` between events n and n+1 with exactly `regs` and memory `digest`
/// (unique: between two events a task never repeats a state, DESIGN.md "Ticks").
struct Point {
  enum Kind : uint8_t { Between, Entry, Trap } kind = Between;
  uint64_t event = 0;
  pid_t tid = 0;
  Registers regs{};
  MemoryDigest digest{};
  /// Trap: `tid` was the only live task there (a replay passing this point's interval
  /// without meeting it is then a divergence: on_between).
  bool alone = false;
  /// Trap, where a scan looks for it: digest_stack_window of the same live memory around
  /// regs.rsp, tested before `digest` (ReplayController::reached); none: not tested.
  std::optional<MemoryDigest> window{};

  /// The events done when a replay stands here: a syscall's entry lies in the interval
  /// after the event before it; the others in their event's.
  uint64_t events_done() const { return kind == Entry && event ? event - 1 : event; }
};

/// Single steps of task `tid` that a reverse step counts, between event `event` and the next.
/// They start where `tid` paused after using `pos` bytes of its buffered syscall records in
/// the event after `event` (0: at `event`): between events a task may make thousands of
/// buffered syscalls, and counting from the last one keeps a reverse step short. When
/// `after_hit` is not 0 they start instead once the run has counted that many hits (from the
/// checkpoint at Run::start_event, where these runs start): a reverse continue lands on a
/// write by single-stepping from the write before it, not from the last event.
/// When `after_pass` is not 0 they start instead at the task's pass number `after_pass` at
/// `pass_addr` in that interval (counted by a PassTrap): a reverse step from a point far from
/// the last event single-steps from the pass before the point's own, not from the event.
struct StepCount {
  pid_t tid = 0;
  uint64_t event = 0;
  uint32_t pos = 0;
  uint64_t after_hit = 0;
  uint64_t after_pass = 0;
  uint64_t pass_addr = 0;
  /// Bytes from pass_addr the counting trampoline's patch may cover (0: PassTrap's most),
  /// as in the count of those passes (Scan::count_len).
  uint64_t pass_len = 0;
};

/// The kinds of run (Run::kind), each with what only it needs.
namespace runs {
/// A user's continue: stop at hits, signals, the end.
struct Forward {};
/// A user's single step of task `tid`.
struct StepInsn {
  pid_t tid = 0;
};
/// Silently to `target`, then report `report`.
struct Goto {
  Point target;
  StopInfo report;
};
/// Silently to `target` (the point a reverse operation starts from), counting hits, and the
/// single steps of `steps` when it is set (a reverse step).
struct Scan {
  Point target;
  std::optional<StepCount> steps;
  /// A reverse continue's watchpoint hit stops just after the write
  /// (Timeline::WatchStop::AfterWrite), so a write trapping at the target is not before it.
  bool after_write = false;
  /// Start from a checkpoint before this event (0: any). A reverse continue's scan further
  /// back ends at this event: the scan before it found no hit after it.
  uint64_t below = 0;
  /// With Run::count_from: how many events before the target's the window starts (it
  /// doubles after each window without a hit).
  uint64_t window = 0;
  /// Counts the passes of the target's task at the target's instruction in the target's
  /// interval (a PassTrap that also stops at the target's registers) into Run::passes, for a
  /// reverse step from a point between events (the first of its three replays).
  bool count_passes = false;
  /// With count_passes: count the passes at this instruction instead (the one just before
  /// the target's, when the target is the first pass at its own), and find the target with
  /// an internal breakpoint at its instruction.
  uint64_t count_at = 0;
  uint64_t count_len = 0;  ///< bytes from count_at to the target's instruction (patch room)
  /// With count_passes or find_by_trap: the target task's stack words from its rsp up
  /// (PassChecks).
  std::vector<uint64_t> stack_words{};
  /// A reverse continue's scan to a point between events: found by a counting trampoline at
  /// its instruction that compares registers in the task (PassTrap), which stops only at
  /// passes with the point's registers, instead of an internal breakpoint there, which stops
  /// at every pass (millions in a loop without syscalls).
  bool find_by_trap = false;
  /// The target is not where the reverse continue started but a checkpoint's point inside
  /// the interval, where the scan before this one started (so it found no hit after it): a
  /// write trapping there is a hit before it, whatever after_write says.
  bool window_end = false;
  /// A reverse step from a syscall's entry (the target, an Entry point): counts the target
  /// task's arrivals at this address, the syscall instruction (an internal breakpoint), in
  /// Run::passes, those since the task's last event only. The last one shows the entry's state (an
  /// entry is shown as the task before its syscall instruction, ReplayController::registers); a
  /// PassNumber run goes there and steps back once more from it. The replay to the entry runs at
  /// full speed instead of single-stepping the whole stretch since the task's last event.
  uint64_t count_arrivals = 0;
};
/// Silently to hit number `count` (from the checkpoint at Run::start_event), then report it.
struct HitNumber {
  uint64_t count = 0;
  StopInfo report;
  bool after_write = false;  ///< as Scan::after_write
};
/// Silently to `count` single steps of `from`, then report `report`.
struct Steps {
  StepCount from;
  uint64_t count = 0;
  StopInfo report;
};
/// A reverse continue's watchpoint hit number `hit` (from Run::start_event) came just after
/// task `tid` ran the instruction at `addr`, which wrote the watched bytes
/// (arch/write_insn.h). Silently to that hit, counting the task's arrivals at `addr` (an
/// internal breakpoint) in Run::steps: when the hit comes right after the task stepped over
/// `addr`, the point before the write is its last arrival there (a PassNumber run goes to
/// it). Otherwise a reverse step from the hit finds it. Either way no single step runs from
/// the task's last event: the cost does not grow with the distance to the last syscall.
struct PassCount {
  pid_t tid = 0;
  uint64_t addr = 0;
  uint64_t hit = 0;
  StopInfo report;
};
/// Silently to task `tid`'s `count`-th arrival at `addr` (from Run::start_event), then report
/// `report` there.
struct PassNumber {
  pid_t tid = 0;
  uint64_t addr = 0;
  uint64_t count = 0;
  StopInfo report;
  /// Counts only the arrivals between this event and the next (0: all of them).
  uint64_t event = 0;
  /// Not a stop: a reverse step goes on from that arrival, which shows the same state as
  /// the syscall entry the reverse step started from (Scan::count_arrivals).
  bool then_step_back = false;
};
}  // namespace runs

/// What the current replay is for (its kind), and what it has counted.
struct Run {
  using Kind = std::variant<runs::Forward, runs::StepInsn, runs::Goto, runs::Scan, runs::HitNumber,
                            runs::Steps, runs::PassCount, runs::PassNumber>;
  Kind kind;
  uint64_t start_event = 0;  ///< the checkpoint this replay started from (0: the start)
  /// Hits count only once the replay has done this event, and the debugger's watchpoints are
  /// armed only from there (0: from the start). A reverse continue with software watchpoints
  /// scans back in growing windows (Scan::window): a write to a watched page costs a fault or
  /// a single step, so the replay runs at full speed up to the window.
  uint64_t count_from = 0;
  /// Start from this checkpoint inside start_event's interval (IntervalCheckpoints id; 0: from
  /// the checkpoint just after an event): the runs of one reverse step count from one place.
  uint64_t inner = 0;
  // Counted along the way.
  uint64_t hits = 0, steps = 0;
  /// Traps of a window end's trampoline that were not the point (Scan::window_end).
  uint64_t trap_misses = 0;
  /// A Scan's trampoline (find_by_trap, count_passes) goes in only after this much replay
  /// from the run's start, a share (ReplayController::kArmShare) of the replay time between
  /// the checkpoint it starts from and its target when one replay went through both, so that
  /// most of the stretch runs without it (it runs at every pass of its instruction). A count
  /// of passes then counts from a checkpoint taken where the trampoline goes in (late_from
  /// keeps the one it replaced). A scan that passes its target before then (its replay ran
  /// faster than the one that measured it) is run again with the trampoline from the start.
  /// Set for one start checkpoint: a run made from another (same_start included) has none.
  std::chrono::milliseconds arm_after{0};
  uint64_t late_from = 0;  ///< the interval checkpoint the count started from (0: none)
  /// A reverse continue's Scan arms the debugger's watchpoints only once the replay time
  /// (CheckpointStore::cost_here, ms from the trace's start) reaches this (0: from the
  /// start), so that the dense hits of a window (a Python line's code unit read at every
  /// pass of a loop, each a trap) are counted only near its end: a checkpoint is taken there
  /// (inside the interval, or at an event once anchored), and the hits count from it
  /// (watch_armed). No hit after it: the scan again, watch_lead times kLateWatchGrowth
  /// before that checkpoint (ReplayController::rescan_armed). Set for one start checkpoint:
  /// a run made from another (same_start included) has none.
  double watch_at_ms = 0;
  std::chrono::microseconds watch_lead{0};  ///< the window's replay time left armed (estimated)
  /// They went in, at the checkpoint the run now starts from (start_event, inner): the hits
  /// count from there.
  bool watch_armed = false;
  /// Where the run started before the late watchpoints moved its start (rescan_armed scans
  /// again from there).
  uint64_t watch_start_event = 0, watch_start_inner = 0;
  /// While the watchpoints wait to go in: the replay time at which this replay finished each
  /// of the window's last kWatchEvents events (event number, ms), so that a try after it
  /// arms at the same distance from an event as this one measured (replays of one window
  /// drift apart by milliseconds: copy-on-write faults after a checkpoint's restore).
  std::deque<std::pair<uint64_t, double>> watch_events;
  static constexpr size_t kWatchEvents = 64;
  /// Arm watch_anchor_ms of replay after this event is done (0: watch_at_ms as it is).
  uint64_t watch_anchor_event = 0;
  double watch_anchor_ms = 0;
  bool watch_anchored = false;  ///< this replay did watch_anchor_event: watch_at_ms is its own
  /// watch_at_ms was measured by a replay of this window (which ended before it armed),
  /// not estimated from its checkpoints' replay times.
  bool watch_measured = false;
  /// The last of `steps` that left the task outside the code a reverse step skips (0: none).
  uint64_t landing = 0;
  uint64_t passes = 0;        ///< Scan::count_passes: the passes up to the target, its own too
  bool pass_reached = false;  ///< StepCount::after_pass: that pass came (steps count now)
  std::optional<StopInfo> last_hit_info;
  /// A checkpoint this run passed or took, and how many hits it had counted there.
  struct HitsAt {
    uint64_t event = 0;  ///< the checkpoint just after this event (Run::start_event) ...
    uint64_t inner = 0;  ///< ... or this one inside its interval (IntervalCheckpoints id)
    uint64_t hits = 0;   ///< hits counted before it
  };
  /// A reverse continue's scan: the checkpoints it went through, oldest first, so that the
  /// run to its last hit starts from the latest one before that hit (a Run of its own kind
  /// counts hits after it) instead of from the scan's own start.
  std::vector<HitsAt> hits_at;

  Run() = default;
  Run(Kind k) : kind(std::move(k)) {}
  /// A run of kind `k` that starts where `from` started and counts from the same place: its
  /// checkpoint (start_event, inner) and window (count_from). Its own counts start at zero.
  static Run same_start(Kind k, const Run& from) {
    Run r(std::move(k));
    r.start_event = from.start_event;
    r.count_from = from.count_from;
    r.inner = from.inner;
    return r;
  }

  /// The kind as `K`, or nullptr when the run is of another kind.
  template <class K>
  K* as() {
    return std::get_if<K>(&kind);
  }
  template <class K>
  const K* as() const {
    return std::get_if<K>(&kind);
  }
  /// Whether it is a user's forward operation (continue, instruction step).
  bool forward() const { return as<runs::Forward>() || as<runs::StepInsn>(); }
  /// The point a Goto or Scan goes to (nullptr for other kinds).
  const Point* target() const {
    if (auto* g = as<runs::Goto>()) return &g->target;
    if (auto* s = as<runs::Scan>()) return &s->target;
    return nullptr;
  }
  /// The steps a Scan (of a reverse step) or a Steps run counts (nullptr: none).
  const StepCount* step_count() const {
    if (auto* s = as<runs::Scan>()) return s->steps ? &*s->steps : nullptr;
    if (auto* s = as<runs::Steps>()) return &s->from;
    return nullptr;
  }
};

}  // namespace rwd
