// Reading the fields of a raw siginfo_t (sigaction(2)) that rewind's decisions depend on.
#pragma once

#include <array>
#include <cstdint>

namespace rwd {

/// A siginfo_t as PTRACE_GETSIGINFO returns it: 128 bytes.
using SigInfo = std::array<uint8_t, 128>;

/// siginfo_t.si_code: > 0 when the kernel raised it, SI_USER (0) for kill, SI_TKILL (-6)...
int siginfo_code(const SigInfo& si);

/// True for a fault raised by the instruction the task executes (SIGSEGV, SIGBUS, SIGFPE,
/// SIGILL or SIGTRAP with a kernel si_code): it happens again by itself in replay.
bool is_synchronous_fault(int sig, const SigInfo& si);

/// True for a timer's expiry: si_code SI_TIMER (timer_create(2)), or SIGALRM, SIGVTALRM or
/// SIGPROF with SI_KERNEL (setitimer(2), alarm(2)); a standard signal (below SIGRTMIN), so
/// that two expiries while one is pending merge into one (signal(7)).
bool is_timer_expiry(int sig, const SigInfo& si);

/// siginfo_t.si_fd: the descriptor of an I/O signal (F_SETSIG, fcntl(2); si_code POLL_IN...).
int siginfo_fd(const SigInfo& si);

/// True when this process sent the signal with tgkill(2) (si_code SI_TKILL, si_pid ours, or 0
/// as a task in a PID namespace below ours sees us).
bool sent_by_this_process(const SigInfo& si);

/// A siginfo_t for `sig` with si_code `code` and the _kill or _sigchld fields: si_pid at
/// byte 16, si_uid at 20, si_status at 24 (<asm-generic/siginfo.h> on x86-64), as the kernel
/// fills one it makes itself (a SIGCHLD, a tracer's changed signal).
SigInfo make_siginfo(int sig, int code, int32_t pid, uint32_t uid, int32_t status);

}  // namespace rwd
