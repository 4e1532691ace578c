// Syscalls whose effect replay makes from outside the task, with ptrace requests, instead of
// running them in it (RemoteSyscall: three ptrace stops and a register round trip each).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

#include "engine/arch/registers.h"

namespace rwd {

/// Makes the syscall that stopped task `tid` stands at the entry of (`entry`: orig_rax and
/// the arguments) from outside, where it can: an rt_sigprocmask that returned 0 when recorded
/// (`recorded_result`), whose mask it reads and sets with PTRACE_GETSIGMASK and
/// PTRACE_SETSIGMASK (which keeps SIGKILL and SIGSTOP unblocked as the syscall does,
/// kernel/signal.c), writing the old one to `oldset` when given. Returns the call's result,
/// or nullopt, changing nothing, for the caller to run the call in the task: another call,
/// one that failed when recorded (/proc/PID/mem writes even a read-only page, where the
/// kernel's write would fail), or one whose arguments it would refuse now (a size other than
/// 8 bytes, an unknown `how`, an address it cannot read or write), so that the kernel's own
/// error and partial effect come.
std::optional<int64_t> syscall_from_outside(pid_t tid, const Registers& entry,
                                            int64_t recorded_result);

}  // namespace rwd
