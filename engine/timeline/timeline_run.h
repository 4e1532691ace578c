// What one replay of the timeline is for (the run), and the places it looks for (points).
// Internal to engine/timeline.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
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
};

/// What the current replay is for, and what it has counted.
struct Run {
  enum Kind : uint8_t {
    Forward,    ///< user continue: stop at hits, signals, the end
    StepInsn,   ///< user single step of `tid`
    Goto,       ///< silently to `target`, then report `report`
    Scan,       ///< silently to `target`, counting hits (and steps of `tid` after `event`)
    HitNumber,  ///< silently to hit number `count`, then report it
    Steps,      ///< silently to `count` single steps of `tid` after event `event`
  } kind = Forward;
  pid_t tid = 0;
  uint64_t event = 0, count = 0;
  Point target;
  StopInfo report;
  bool count_steps = false;  ///< Scan: single-step `tid` after `event`, counting steps
  /// Scan with count_steps, Steps: the steps start where `tid` paused after using `pos`
  /// bytes of its buffered syscall records in the event after `event` (0: at `event`).
  /// Between events a task may make thousands of buffered syscalls: counting from the last
  /// one keeps a reverse step short.
  uint32_t pos = 0;
  /// Scan with count_steps, Steps: when not 0, the steps start instead once the run has
  /// counted this many hits (from the checkpoint at `start_event`, where these runs start):
  /// a reverse continue lands on a write by single-stepping from the write before it, not
  /// from the last event.
  uint64_t after_hit = 0;
  /// Scan and HitNumber of a reverse continue: a watchpoint hit stops just after the write
  /// (Timeline::WatchStop::AfterWrite), so a write trapping at the target is not before it.
  bool after_write = false;
  uint64_t below = 0;        ///< Scan: start from a checkpoint before this event (0: any)
  uint64_t start_event = 0;  ///< the checkpoint this replay started from (0: the start)
  // Counted along the way.
  uint64_t hits = 0, steps = 0;
  std::optional<StopInfo> last_hit_info;
};

}  // namespace rwd
