#include "outside_syscalls.h"

#include <signal.h>
#include <sys/syscall.h>

#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"

namespace rwd {

namespace {

/// rt_sigprocmask(how, set, oldset, sigsetsize) for stopped task `tid`, as syscall_from_outside
/// says.
std::optional<int64_t> sigprocmask_from_outside(pid_t tid, const Registers& entry) {
  const uint64_t how = entry.rdi, set_at = entry.rsi, old_at = entry.rdx;
  if (entry.r10 != sizeof(uint64_t)) return std::nullopt;  // -EINVAL
  uint64_t blocked = 0;
  if (!try_get_sigmask(tid, blocked)) return std::nullopt;
  uint64_t next = blocked;
  if (set_at) {
    uint64_t set = 0;
    try {
      read_memory_exact(tid, set_at, &set, sizeof set);
    } catch (const SystemError&) {
      return std::nullopt;  // -EFAULT, before any change
    }
    switch (how) {
      case SIG_BLOCK:
        next = blocked | set;
        break;
      case SIG_UNBLOCK:
        next = blocked & ~set;
        break;
      case SIG_SETMASK:
        next = set;
        break;
      default:
        return std::nullopt;  // -EINVAL
    }
  }
  if (old_at) {
    // The kernel writes the old mask after setting the new one; a write that fails there
    // leaves the new mask set and returns -EFAULT, which the real call gives.
    try {
      write_memory(tid, old_at, &blocked, sizeof blocked);
    } catch (const SystemError&) {
      return std::nullopt;
    }
  }
  if (next != blocked && !try_set_sigmask(tid, next)) return std::nullopt;
  return 0;
}

}  // namespace

std::optional<int64_t> syscall_from_outside(pid_t tid, const Registers& entry,
                                            int64_t recorded_result) {
  if (recorded_result != 0) return std::nullopt;
  if (entry.orig_rax == SYS_rt_sigprocmask) return sigprocmask_from_outside(tid, entry);
  return std::nullopt;
}

}  // namespace rwd
