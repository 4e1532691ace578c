// Counting a task's passes at one instruction at native speed, for reverse steps far from any
// event (reverse_execution.cpp): a PatchKind::Count trampoline (point_trampoline.h) counts
// each pass inside the task and traps only at the pass asked for, or where the registers
// match a point. Without it, finding the state one instruction before a point single-steps
// the task from its last event: billions of steps in a loop that makes no syscall.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/replay/point_trampoline.h"
#include "engine/replay/replay_task.h"
#include "engine/replay/trampoline_install.h"

namespace rwd {

/// One counting trampoline installed in a replayed process, and what its traps mean.
class PassTrap {
 public:
  /// Bytes from the instruction that the patch may cover at most (the jump, then whole
  /// instructions): other code patches are kept out of them while one is wanted there.
  static constexpr uint64_t kPatchReach = 20;

  /// What a SIGTRAP of the trampoline's process, stopped with rip `rip`, was.
  enum class Trap : uint8_t {
    None,     ///< not this trampoline's
    Match,    ///< the registers matched the point's (PassChecks::registers)
    Count,    ///< the pass numbered PassChecks::stop_at
    Entered,  ///< code jumped into the patched bytes: go on at the instruction's copy
  };

  /// Installs in `t` (stopped before running its own code) a trampoline at `x`, whose
  /// original bytes (breakpoints hidden) are `code` (32 bytes or more), comparing `want`'s
  /// registers when `checks.registers`. Returns false, with nothing changed, when the
  /// instructions at `x` cannot be moved, the patch would cover more than `reach` bytes, no
  /// room lies in reach of a jump, or the mapping fails.
  /// Throws SystemError/DivergenceError when the task misbehaves.
  bool install(ReplayTask& t, uint64_t x, const std::vector<uint8_t>& code, const Registers& want,
               PassChecks checks, uint64_t reach = kPatchReach);
  /// Whether one is installed.
  bool installed() const { return installed_; }
  /// The process it is installed in.
  pid_t pid() const { return pid_; }
  /// The instruction it counts the passes of.
  uint64_t point() const { return install_.plan().point; }
  /// What a SIGTRAP with rip `rip` in its process was; for Match and Entered, `go_on` is
  /// where the task continues when it does not stop there (the moved instructions).
  Trap classify(uint64_t rip, uint64_t& go_on) const;
  /// The passes counted so far (reads the task's memory through `tid`).
  uint64_t passes(pid_t tid) const;
  /// Puts the original code back and unmaps the trampoline (its task stopped).
  void remove();
  /// Forgets it without touching the process (the replay it was in is thrown away).
  void abandon();

 private:
  TrampolineInstall install_;
  bool installed_ = false;
  pid_t pid_ = 0;
};

}  // namespace rwd
