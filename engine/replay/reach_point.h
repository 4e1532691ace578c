// Finding again, in replay, a point between two events without a hardware counter
// (DESIGN.md "Ticks, preemption and asynchronous signals"): the first time the task stands at
// the recorded instruction with the recorded registers and memory digest.
#pragma once

#include <cstdint>

#include "engine/replay/replay_task.h"
#include "engine/trace/event.h"

namespace rwd {

/// How reach_point found a point.
enum class PointMethod : uint8_t {
  AlreadyThere,  ///< the task stood at it
  Jump,          ///< a trampoline that compares registers in the task (PatchKind::Jump)
  Int3,          ///< an int3 at the point, a stop at every pass (PatchKind::Int3)
  Breakpoint,    ///< a hardware breakpoint, a stop at every pass
};

/// What reaching one point took.
struct PointSearch {
  uint64_t stops = 0;  ///< ptrace stops of the task on the way
  PointMethod method = PointMethod::AlreadyThere;
};

/// Runs `t` forward until its registers equal `e.regs` and the digest of its process's
/// writable memory (minus `e.exclusions`) equals `e.digest`. Tries, in order:
/// - a jump to a trampoline that compares the registers inside the task
///   (point_trampoline.h), so that only passes of e.regs.rip with matching registers stop;
/// - where the instructions after the point cannot be moved, an int3 at the point (a stop
///   at every pass, continuing through a moved copy of the instruction);
/// - where neither can be used (the point's own instruction cannot be moved, the observer
///   refuses, no room in reach), a hardware breakpoint at e.regs.rip.
/// All are sound because between two events a task runs deterministically: a state seen
/// twice would repeat forever. REWIND_POINT_SEARCH=int3 or =breakpoint starts at that method
/// (for tests and measurements). Returns the stops it took and the method that found the
/// point. Throws DivergenceError if the task reaches a syscall, a signal or its end first.
PointSearch reach_point(ReplayTask& t, const Event& e);

}  // namespace rwd
