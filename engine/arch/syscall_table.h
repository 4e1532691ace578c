// One table describing every system call rewind records (DESIGN.md "Recording"): how replay
// reproduces it and which memory the kernel writes (out-parameters), with sizes from the
// arguments or the result. Argument semantics follow the syscalls' man pages (section 2).
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace rwd {

/// How replay reproduces a syscall.
enum class ReplayPolicy : uint8_t {
  Emulate,           ///< not run: result and out-parameters are written from the trace
  Execute,           ///< run for real (it shapes the address space or signal state); the result
                     ///< must equal the recorded one, else replay has diverged
  ExecuteSetResult,  ///< run for real, then the recorded result is set (it names a tid)
  Special,           ///< handled by dedicated code (mmap, mremap, execve, fork, exit, ...)
};

/// How the size of an out-parameter is computed. Recording a few bytes more than the kernel
/// wrote is harmless (replay writes back the same bytes); recording fewer would lose data.
enum class SizeRule : uint8_t {
  None,
  Fixed,        ///< `n` bytes
  Result,       ///< the syscall's result, in bytes (at most argument `size_arg`)
  ResultTimes,  ///< result * n bytes (at most argument `size_arg` * n)
  Arg,          ///< the value of argument `size_arg`, in bytes
  ArgTimes,     ///< argument `size_arg` * n bytes
  LenPtr,       ///< the u32 that argument `size_arg` points to, read at syscall entry
  Iov,          ///< an iovec array (count in argument `size_arg`) filled with `result` bytes
  FdSet,        ///< an fd_set for nfds = argument `size_arg`: ceil(nfds/64) * 8 bytes
};

/// One out-parameter: a pointer argument and the rule for its size.
struct OutParam {
  int8_t arg = -1;  ///< index (0-5) of the pointer argument; -1 ends the list
  SizeRule rule = SizeRule::None;
  uint32_t n = 0;         ///< bytes (Fixed) or element size (ResultTimes, ArgTimes)
  int8_t size_arg = -1;   ///< argument used by Arg, ArgTimes, LenPtr, Iov, FdSet
  bool on_error = false;  ///< written even when the syscall fails (nanosleep's remainder)
};

/// What a write-like syscall sends out, so that replay can print the program's output again.
enum class OutputKind : uint8_t {
  None,
  Buffer,  ///< fd in arg 0, bytes at arg 1, `result` of them (write, pwrite64, send...)
  Iov,     ///< fd in arg 0, iovec array in arg 1, count in arg 2 (writev, pwritev)
};

/// One row of the table.
struct SyscallSpec {
  int nr = -1;
  const char* name = nullptr;
  ReplayPolicy replay = ReplayPolicy::Emulate;
  std::array<OutParam, 4> out{};
  OutputKind output = OutputKind::None;
};

/// The spec of syscall `nr`, or nullptr when rewind does not support it.
const SyscallSpec* syscall_spec(long nr);

/// The kernel's name for syscall `nr` ("epoll_pwait2"), or "syscall_NNN" when unknown.
std::string syscall_name(long nr);

/// True for the kernel-internal results that ask for a restart when no handler runs
/// (include/linux/errno.h in the kernel: ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND,
/// ERESTART_RESTARTBLOCK); a tracer sees them at a syscall's exit when a signal interrupted it.
bool is_restart_result(int64_t result);

/// Out-parameters of ioctl(fd, request, arg) for a successful call: bytes written at arg.
/// Requests with the _IOC_READ direction bit carry their size; legacy terminal requests come
/// from a table (ioctl_tty(2)). Returns -1 when the request is unknown.
long ioctl_output_size(unsigned long request);

}  // namespace rwd
