// One table describing every system call rewind records (DESIGN.md "Recording"): how replay
// reproduces it and which memory the kernel writes (out-parameters), with sizes from the
// arguments or the result. Argument semantics follow the syscalls' man pages (section 2).
// The rows are generated at build time by tools/gen_syscalls.py from the one declaration,
// engine/arch/syscalls.py, which also gives librewind_preload.so its buffering rules.
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
  Mmap,              ///< mmap: at the recorded address, of the trace's saved copy of the file
  Mremap,            ///< mremap: forced to the recorded destination
  Fork,              ///< fork, vfork, clone, clone3: run for real, the child gets its rec tid
  Exit,              ///< exit, exit_group: run for real; the task must end
  Sigreturn,         ///< rt_sigreturn: run for real (restores the signal frame's registers)
  SysvShm,           ///< shmat: a segment of the replayer's own attached at the recorded address,
                     ///< holding the recorded contents; shmctl: emulated, IPC_RMID drops it
  VmWrite,           ///< process_vm_writev: emulated, and the bytes it wrote are written into
                     ///< the replayed process the recorded pid names
  Ptrace,            ///< ptrace: emulated, and a request that changed the tracee (POKE, SET)
                     ///< is made again on the replayed tracee (tracee_writes.h)
};

/// How the recorder handles a syscall.
enum class RecordPolicy : uint8_t {
  Record,  ///< the kernel runs it; result and out-parameters go into the trace
  Enosys,  ///< the recorder answers -ENOSYS without running it (rseq, as rr does)
};

/// Whether a syscall may wait for another task, so that the recorder lets another task run
/// meanwhile (rr's "desched") and the preload library buffers it only with its desched
/// counter armed.
enum class BlockRule : uint8_t {
  Never,
  UnlessRegular,  ///< on anything but a regular file (pipes, sockets, terminals)
  MayBlock,
  FutexOp,    ///< futex: the waiting and locking operations
  FcntlLock,  ///< fcntl: F_SETLKW and F_OFD_SETLKW
};

/// What a syscall does to the task tree and the address space, for the layers that react to
/// it (bits of SyscallSpec::flags).
enum SyscallFlag : uint8_t {
  kChangesMappings = 1,  ///< may replace mapped pages (mmap, munmap, mremap)
  kMapsCode = 2,         ///< argument 2 holds PROT bits: with PROT_EXEC, it maps code
  kForkLike = 4,         ///< creates a task (fork, vfork, clone, clone3)
  kExec = 8,             ///< execve, execveat
  kExit = 16,            ///< exit, exit_group
  kReturnsAddress = 32,  ///< a success returns an address (mmap, mremap, brk): shown in hex
  kSetsSignalMask = 64,  ///< running it may leave another signal mask: it sets one, or waits
                         ///< under a temporary one put back only on the way to user code
                         ///< (rt_sigprocmask, rt_sigreturn, ppoll, rt_sigsuspend: signal(7))
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

/// Whether an out-parameter is written when the syscall fails.
enum class ErrorWrites : uint8_t {
  Never,        ///< only on success
  Always,       ///< on every result (nanosleep's remainder, select's fd sets)
  Interrupted,  ///< also when a signal interrupted the call (-EINTR or -ERESTART*): poll(2)
                ///< writes every revents back before it returns (fs/select.c do_sys_poll)
};

/// One out-parameter: a pointer argument and the rule for its size.
struct OutParam {
  int8_t arg = -1;  ///< index (0-5) of the pointer argument; -1 ends the list
  SizeRule rule = SizeRule::None;
  uint32_t n = 0;        ///< bytes (Fixed) or element size (ResultTimes, ArgTimes)
  int8_t size_arg = -1;  ///< argument used by Arg, ArgTimes, LenPtr, Iov, FdSet
  ErrorWrites on_error = ErrorWrites::Never;  ///< whether a failed call wrote it too
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
  RecordPolicy record = RecordPolicy::Record;
  std::array<OutParam, 4> out{};
  OutputKind output = OutputKind::None;
  BlockRule blocks = BlockRule::Never;
  /// Out-parameters decided by an argument's value (ioctl, fcntl, prctl, recvmsg), in
  /// engine/record/syscall_capture.cpp; `out` is empty then.
  bool custom_out = false;
  uint8_t flags = 0;  ///< SyscallFlag bits

  bool has(SyscallFlag f) const { return (flags & f) != 0; }
};

/// The spec of syscall `nr`, or nullptr when rewind does not support it.
const SyscallSpec* syscall_spec(long nr);

/// True when syscall `nr` has flag `f` (false for syscalls not in the table).
bool syscall_has(long nr, SyscallFlag f);

/// The kernel's name for syscall `nr` ("epoll_pwait2"), or "syscall_NNN" when unknown.
std::string syscall_name(long nr);

/// Whether `nr` is a syscall number of the kernel headers rewind was built with
/// (syscall_names.inc, generated from <asm/unistd_64.h>). Numbers outside it (negative ones,
/// numbers past the table, other tools' private numbers) fail with ENOSYS natively
/// (syscall(2): the kernel's answer to a number it does not implement).
bool syscall_number_known(long nr);

/// True for the kernel-internal results that ask for a restart when no handler runs
/// (include/linux/errno.h in the kernel: ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND,
/// ERESTART_RESTARTBLOCK); a tracer sees them at a syscall's exit when a signal interrupted it.
bool is_restart_result(int64_t result);

/// Out-parameters of ioctl(fd, request, arg) for a successful call: bytes written at arg.
/// Requests with the _IOC_READ direction bit carry their size; legacy terminal requests come
/// from a table (ioctl_tty(2)). Returns -1 when the request is unknown.
long ioctl_output_size(unsigned long request);

/// Out-parameters of fcntl(fd, cmd, arg) for a successful call: bytes written at arg (0 for
/// the commands that write nothing), from the FCNTLS table of engine/arch/syscalls.py
/// (fcntl(2)). Returns -1 for a command the table does not list.
long fcntl_output_size(long cmd);

}  // namespace rwd
