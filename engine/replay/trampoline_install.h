// Putting a point trampoline (point_trampoline.h) into a stopped replayed task and taking it
// out again.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/replay/point_trampoline.h"
#include "engine/replay/replay_task.h"

namespace rwd {

/// A trampoline installed in `t`'s process: a shared anonymous mapping holding its code (left
/// out of memory digests, which cover private memory only) and the jump written over the
/// point's instructions. The mapping is made and removed with mmap/munmap run inside the
/// task, borrowing the point's own first bytes for the `syscall` instruction; the task's
/// registers and pending resume state are put back after each. The destructor puts the
/// original code back if `remove` was not called (the mapping then stays: the task may not
/// be at a stop where it can run a syscall).
class TrampolineInstall {
 public:
  /// Installs `plan` in `t`. Returns false (nothing changed) when the mapping cannot be made
  /// there. Throws SystemError/DivergenceError when the task misbehaves.
  bool install(ReplayTask& t, const PointTrampoline& plan);
  /// Puts the original code back and unmaps the trampoline (the task must be at a ptrace stop
  /// where its registers can be set). Idempotent.
  void remove();
  /// Puts the original code back only (for a task that cannot run syscalls now), where the
  /// patch is still there.
  void restore_code() noexcept;
  /// Forgets the installation without touching the task (its process is gone, or is being
  /// thrown away with the replay).
  void abandon() noexcept { patched_ = mapped_ = false; }
  /// The plan installed.
  const PointTrampoline& plan() const { return plan_; }
  ~TrampolineInstall() { restore_code(); }

 private:
  /// Runs one syscall in the task at the point's address, then restores its registers.
  int64_t run_syscall(long nr, std::array<uint64_t, 6> args);

  ReplayTask* t_ = nullptr;
  PointTrampoline plan_;
  std::vector<uint8_t> original_;  ///< the bytes the patch replaced
  bool patched_ = false, mapped_ = false;
};

}  // namespace rwd
