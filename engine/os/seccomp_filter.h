// The recorder's seccomp-bpf filter (DESIGN.md "Recording"; seccomp(2), Documentation/userspace-
// api/seccomp_filter.rst): every syscall stops the task for the recorder (SECCOMP_RET_TRACE,
// seen as PTRACE_EVENT_SECCOMP) except those made from librewind_preload.so's two untraced
// stubs (rewind_preload_abi.h: RWD_UNTRACED_IP, RWD_PRIVILEGED_UNTRACED_IP).
#pragma once

#include <cstdint>

namespace rwd {

/// The SECCOMP_RET_DATA of the filter's SECCOMP_RET_TRACE: its stops' PTRACE_GETEVENTMSG.
/// Another value is a program's own filter asking for a trace stop (where filters disagree,
/// the kernel reports the most recently installed filter's data: seccomp(2)).
constexpr uint32_t kRecorderSeccompData = 0x5277;  // "wR"

/// Installs the filter in the calling process (the child, after it is seized and before it
/// execs; with no tracer, SECCOMP_RET_TRACE would fail every syscall with ENOSYS). Sets
/// PR_SET_NO_NEW_PRIVS first, as seccomp requires of unprivileged callers. Returns false (errno
/// set) when the kernel refuses it.
bool install_syscall_filter();

}  // namespace rwd
