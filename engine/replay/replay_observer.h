// The hook through which a debugger (the timeline) watches a replay run user code: it may
// turn a resume into a single step and claims the traps its breakpoints, watchpoints and
// steps cause, without the replay's event handlers knowing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/replay/replay_task.h"

namespace rwd {

/// Implemented by the timeline. Called only around resumes that run the program's own code
/// towards its next event (PTRACE_SYSEMU), never around rewind's injected syscalls.
class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  /// Called before `t` resumes with `request`; returns the request to use instead
  /// (PTRACE_SYSEMU_SINGLESTEP to run one instruction).
  virtual int before_resume(ReplayTask& t, int request) = 0;
  /// Called for every stop of `t` after such a resume. Returns true when the stop was the
  /// debugger's own (a breakpoint, watchpoint or finished step, now handled): the replay
  /// then resumes `t` as it meant to. May throw to abandon the replay (the timeline moving
  /// elsewhere); callers then discard the whole replay.
  virtual bool after_stop(ReplayTask& t, const Stop& s) = 0;
  /// Asked before the replay replaces `len` bytes of code at `addr` in `t`'s process with a
  /// jump to a trampoline, for a search that then runs `t` (reach_point). The program then
  /// runs some instructions elsewhere: refuse (return false) while single-stepping, watching
  /// memory, or with a breakpoint in those bytes. Until end_code_patch the observer must not
  /// pause the replay (an interrupt waits for the next stop).
  virtual bool begin_code_patch(const ReplayTask& t, uint64_t addr, size_t len) {
    (void)t, (void)addr, (void)len;
    return true;
  }
  /// The code is back as it was (see begin_code_patch).
  virtual void end_code_patch() {}
};

/// The observer installed for the calling thread, or nullptr.
ReplayObserver* replay_observer();

/// Installs the observer for replays run by the calling thread (nullptr: none).
void set_replay_observer(ReplayObserver* observer);

}  // namespace rwd
