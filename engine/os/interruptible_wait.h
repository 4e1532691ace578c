// Waiting for a tracee's next stop while it runs its own code for a long time (a loop with no
// syscall), yet answering a request to stop it: a user's pause. The wait wakes every
// `kInterruptPollMs` (a per-thread POSIX timer's signal makes waitpid return EINTR) and asks
// whether the task should be stopped; if so, PTRACE_INTERRUPT (ptrace(2): only for tracees
// attached with PTRACE_SEIZE) makes it report a PTRACE_EVENT_STOP where it is.
#pragma once

#include <sys/types.h>

#include <atomic>

namespace rwd {

/// How often an interruptible wait checks its flag, in milliseconds.
inline constexpr long kInterruptPollMs = 20;

/// waitpid(`tid`, __WALL) that, while `wanted` (may be null) holds true and `sent` is false,
/// sends PTRACE_INTERRUPT to `tid` once (within kInterruptPollMs of the flag turning true)
/// and sets `sent`. Returns the wait status; the interrupt's stop comes as a wait status
/// with PTRACE_EVENT_STOP in bits 16-23. When the task stopped for another reason just before
/// the interrupt arrived, the interrupt stays pending: the task reports it at its next resume
/// (`sent` stays true until the caller sees that stop). Must run on the tracer thread.
/// Throws SystemError when waitpid fails.
int wait_interruptible(pid_t tid, const std::atomic<bool>* wanted, bool& sent);

}  // namespace rwd
