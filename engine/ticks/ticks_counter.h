// The hardware side of naming points between events (DESIGN.md "Ticks"): a per-task counter
// of retired conditional branches, and the logic that drives a task to an exact tick count
// with a counter whose interrupt can arrive late ("skid"). Not yet used by record/replay,
// which are counter-less; the logic is unit-tested against a fake counter.
#pragma once

#include <cstdint>

#include "engine/arch/registers.h"

namespace rwd {

/// A counter of one task's retired conditional branches.
class TicksCounter {
 public:
  virtual ~TicksCounter() = default;
  /// Ticks counted so far.
  virtual uint64_t read() = 0;
  /// Makes the task stop (an interrupt signal under ptrace) after at least `n` more ticks;
  /// it may stop up to the counter's skid later.
  virtual void interrupt_after(uint64_t n) = 0;
  /// Cancels a pending interrupt.
  virtual void cancel_interrupt() = 0;
};

/// What the tick-target logic needs from a stopped task.
class SteppableTask {
 public:
  virtual ~SteppableTask() = default;
  /// Resumes until the counter's interrupt (or a breakpoint) stops it; false if the task
  /// stopped for any other reason (a syscall, a signal, its end).
  virtual bool run_to_interrupt() = 0;
  /// Executes one instruction; false if it did not stop after it.
  virtual bool single_step() = 0;
  virtual Registers regs() = 0;
};

/// Outcome of reach_tick_target.
enum class TickTargetResult : uint8_t {
  Reached,   ///< ticks == target and registers equal the wanted ones
  Overshot,  ///< the counter went past the target (skid larger than promised)
  Lost,      ///< the task stopped for another reason, or stepping found no match
};

/// Drives `task` to the point (`target` ticks, `want` registers): while more than `skid`
/// ticks remain it runs to an interrupt programmed `skid` ticks early, then it single-steps
/// until the count reaches `target` and the registers match (several instructions can share
/// a tick count: the first with equal registers is the point). `max_steps` bounds stepping.
TickTargetResult reach_tick_target(TicksCounter& counter, SteppableTask& task, uint64_t target,
                                   const Registers& want, uint64_t skid,
                                   uint64_t max_steps = 1u << 20);

}  // namespace rwd
