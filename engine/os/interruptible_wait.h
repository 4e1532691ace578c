// Waiting for a tracee's next stop while it runs its own code for a long time (a loop with no
// syscall), yet answering a request to stop it: a user's pause. A per-thread POSIX timer looks
// every `kInterruptPollMs` during the wait, and first when `at` comes; its signal's handler
// asks whether the task should be stopped and if so sends PTRACE_INTERRUPT (ptrace(2): only
// for tracees attached with PTRACE_SEIZE), which makes it report a PTRACE_EVENT_STOP where it
// is. The timer stays armed from one wait to the next (most waits last microseconds, and
// arming it is a syscall): the handler, installed with SA_RESTART, lets the wait go on.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>

namespace rwd {

/// How often an interruptible wait checks its flag, in milliseconds.
inline constexpr long kInterruptPollMs = 20;

/// When a running task is to be stopped where it is: while `flag` (may be null) holds true
/// (a user's pause), or once the monotonic clock passes `at` (a checkpoint between events is
/// due). The default never interrupts.
struct InterruptWhen {
  const std::atomic<bool>* flag = nullptr;
  std::chrono::steady_clock::time_point at = std::chrono::steady_clock::time_point::max();
  long poll_ms = kInterruptPollMs;  ///< how often the wait looks (milliseconds)
  /// The first look comes when `at` does if that is at least this far away (microseconds),
  /// else at the first poll: a look just as the task stops on its own loses the interrupt
  /// for that run (wait_interruptible).
  long first_min_us = 1000;
  /// Whether an interrupt can ever be wanted (a timer is worth starting).
  bool any() const { return flag || at != std::chrono::steady_clock::time_point::max(); }
  /// Whether it is wanted now.
  bool due() const { return (flag && flag->load()) || std::chrono::steady_clock::now() >= at; }
};

/// waitpid(`tid`, __WALL) that, while `wanted` is due and `sent` is false,
/// sends PTRACE_INTERRUPT to `tid` once (within kInterruptPollMs of it becoming due)
/// and sets `sent`. Returns the wait status; the interrupt's stop comes as a wait status
/// with PTRACE_EVENT_STOP in bits 16-23. When the task stopped for another reason just before
/// the interrupt arrived, the interrupt stays pending: the task reports it at its next resume
/// (`sent` stays true until the caller sees that stop). Must run on the tracer thread.
/// Throws SystemError when waitpid fails.
int wait_interruptible(pid_t tid, const InterruptWhen& wanted, bool& sent);

}  // namespace rwd
