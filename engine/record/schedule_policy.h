// How the recorder shares the CPU among the tasks of one process: time-slice length and
// which ready task runs next. Its decisions become Sched events, so replay needs none of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>

namespace rwd {

/// The recorder's clock tick, in microseconds: time slices and block detection count in it.
constexpr uint64_t kTickUs = 1000;
/// The tick in chaos mode: finer, so that short slices interrupt short programs too.
constexpr uint64_t kChaosTickUs = 250;

/// Round-robin with fixed slices, or rr's chaos mode: random slice lengths and random choice
/// of the next task, so that rare interleavings show up more often while recording.
class SchedulePolicy {
 public:
  /// `seed` makes a chaos schedule repeatable for tests; 0 picks a random seed.
  explicit SchedulePolicy(bool chaos, uint64_t seed = 0);
  /// Ticks the next task may run user code before it is preempted (if another task waits).
  uint64_t slice();
  /// slice(), made long enough in the default mode that naming the point where the task is
  /// preempted costs at most 1/kPointCostShare of the slice: `point_cost_us` is what the
  /// last such point of its address space took (microseconds; the digest of its writable
  /// memory, DESIGN.md "Ticks, preemption..."), at most kMaxSliceTicks. Chaos mode's slices stay
  /// random: short ones are its point.
  uint64_t slice(uint64_t point_cost_us);
  /// Chaos mode's slice in nanoseconds of the task's own CPU time (task_cpu_clock.h), which
  /// ends it unless slice()'s ticks did first: mostly 50-500 us, so that a thread needing a
  /// millisecond is preempted, sometimes 5-12.5 ms (starving the others, as a loaded machine
  /// would).
  uint64_t slice_ns();
  /// Index in [0, n) of the ready task to run next; n > 0.
  size_t pick(size_t n);
  bool chaos() const { return chaos_; }
  /// Length of a tick in microseconds.
  uint64_t tick_us() const { return chaos_ ? kChaosTickUs : kTickUs; }

 private:
  bool chaos_;
  std::mt19937_64 rng_;
};

/// Default time slice in ticks (10 ms): long enough that compute-bound threads are rarely
/// interrupted, since every interruption costs replay breakpoint stops to find again.
constexpr uint64_t kDefaultSliceTicks = 10;
/// A preemption's point may cost at most this share of the slice before it (1/20: 5%). A
/// process with 200 MB of writable memory takes about 70 ms to digest here, seven times the
/// default slice: xz -T2 recorded about 20 times slower than it ran before slices grew.
constexpr uint64_t kPointCostShare = 20;
/// The longest slice that rule gives, in ticks (2 s): a thread that spins without a syscall
/// until another one acts (a hand-written spin lock) may wait that long for its turn.
constexpr uint64_t kMaxSliceTicks = 2000;

}  // namespace rwd
