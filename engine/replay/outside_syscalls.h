// Syscalls whose effect replay makes from outside the task, with ptrace requests, instead of
// running them in it (RemoteSyscall: three ptrace stops and a register round trip each).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

#include "engine/arch/registers.h"

namespace rwd {

/// Does to stopped task `tid` what rt_sigprocmask(how, set, oldset, sigsetsize) with the
/// arguments in `entry` (rdi, rsi, rdx, r10) would do (kernel/signal.c): reads its blocked
/// mask (PTRACE_GETSIGMASK), writes it to `oldset` when given, and sets the new one
/// (PTRACE_SETSIGMASK, which keeps SIGKILL and SIGSTOP unblocked as the syscall does).
/// Returns 0, the syscall's result, or nullopt, changing nothing, where the call would fail
/// (a size other than 8 bytes, an unknown `how`, an address it cannot read or write): the
/// caller then runs it for real, so that the kernel's own error and partial effect come.
/// Only for a call that returned 0 when recorded: /proc/PID/mem writes even a read-only page,
/// where the kernel's write of `oldset` would fail.
std::optional<int64_t> sigprocmask_from_outside(pid_t tid, const Registers& entry);

}  // namespace rwd
