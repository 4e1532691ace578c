// Finding again, in replay, a point between two events without a hardware counter
// (DESIGN.md "Ticks, preemption and asynchronous signals"): the first time the task stands at
// the recorded instruction with the recorded registers and memory digest.
#pragma once

#include <cstdint>

#include "engine/replay/replay_task.h"
#include "engine/trace/event.h"

namespace rwd {

/// Runs `t` forward until its registers equal `e.regs` and the digest of its process's
/// writable memory (minus `e.exclusions`) equals `e.digest`, using a breakpoint at e.regs.rip
/// and stepping over it while the state differs. This is sound because between two events a
/// task runs deterministically: a state seen twice would repeat forever. Returns the number
/// of breakpoint stops it took. Throws DivergenceError if the task reaches a syscall, a
/// signal or its end first.
uint64_t reach_point(ReplayTask& t, const Event& e);

}  // namespace rwd
