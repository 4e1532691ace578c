#include "ticks_counter.h"

namespace rwd {

TickTargetResult reach_tick_target(TicksCounter& counter, SteppableTask& task, uint64_t target,
                                   const Registers& want, uint64_t skid, uint64_t max_steps) {
  // Phase 1: fast, with interrupts programmed early enough that skid cannot overshoot.
  for (;;) {
    uint64_t now = counter.read();
    if (now > target) return TickTargetResult::Overshot;
    if (target - now <= skid) break;
    counter.interrupt_after(target - now - skid);
    bool stopped = task.run_to_interrupt();
    counter.cancel_interrupt();
    if (!stopped) return TickTargetResult::Lost;
  }
  // Phase 2: exact, one instruction at a time.
  for (uint64_t steps = 0; steps <= max_steps; ++steps) {
    uint64_t now = counter.read();
    if (now > target) return TickTargetResult::Overshot;
    if (now == target && registers_equal(task.regs(), want)) return TickTargetResult::Reached;
    if (!task.single_step()) return TickTargetResult::Lost;
  }
  return TickTargetResult::Lost;
}

}  // namespace rwd
