// The events of a trace (DESIGN.md "Words"): what one task did that replay must reproduce.
// Events are numbered from 1 in record order; that number is the time shown to users.
#pragma once

#include <sys/syscall.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/arch/registers.h"
#include "engine/ticks/memory_digest.h"

namespace rwd {

/// Whether a syscall's return value (rax at its exit) is an error, -errno: the kernel's
/// IS_ERR_VALUE range -4095..-1 (include/linux/err.h). mmap's high addresses are not errors.
constexpr bool syscall_failed(int64_t result) {
  return result < 0 && result > -4096;
}

/// What kind of thing an event records.
enum class EventKind : uint8_t {
  Syscall = 1,       ///< a system call: entry registers, result, out-parameters
  Exec = 2,          ///< a successful execve: the new address space, stack and registers
  Signal = 3,        ///< delivery of a signal to a task
  Exit = 4,          ///< a task ended (its raw wait(2) status)
  Rdtsc = 5,         ///< an rdtsc/rdtscp instruction emulated by the recorder (PR_SET_TSC trap)
  End = 6,           ///< the recording finished normally (last event of a complete trace)
  SyscallEntry = 7,  ///< a task entered a syscall that another task ran beside (it blocked):
                     ///< replay brings the task to the syscall's entry here, in this order
  Sched = 8,         ///< the recorder interrupted a task to let another of its process run; the
                     ///< point is its registers plus a digest of the process's writable memory
  Cpuid = 9,         ///< a cpuid instruction emulated by the recorder (its replacement faulted,
                     ///< insn_patch.h)
};

/// Whether events of kind `k` are instructions the recorder ran for the task (rdtsc, rdtscp,
/// cpuid: emulated_insns.h): their registers are those after it, rip past the instruction.
inline bool is_emulated_insn(EventKind k) {
  return k == EventKind::Rdtsc || k == EventKind::Cpuid;
}

/// "syscall", "exec", ... for dump output.
const char* event_kind_name(EventKind k);

/// Bytes of a task's memory at an address: an out-parameter written by the kernel, or memory
/// captured after exec. The bytes live in the trace's data stream.
struct MemoryRegion {
  uint64_t addr = 0;
  std::vector<uint8_t> bytes;
  /// Recording only: where `bytes` is empty, the region's size when the recorder put its
  /// bytes straight into the trace's data stream instead (TraceWriter::next_event_data).
  uint64_t in_data = 0;
  /// The region's size in bytes, wherever its bytes are.
  uint64_t size() const { return bytes.empty() ? in_data : bytes.size(); }
};

/// One mapping of an address space as /proc/PID/maps shows it, with the saved file behind it.
struct Mapping {
  uint64_t start = 0, end = 0;  ///< [start, end), page aligned
  uint64_t offset = 0;          ///< file offset in bytes
  uint32_t prot = 0;            ///< PROT_* bits
  uint32_t flags = 0;           ///< MAP_PRIVATE or MAP_SHARED
  std::string file;             ///< name of the saved copy under files/, empty for anonymous
  std::string name;             ///< the original path or label ("[stack]"), for display
};

/// Where a write's bytes went at record time; replay -a prints them again there.
enum class OutputStream : uint8_t { None = 0, Stdout = 1, Stderr = 2 };

/// One recorded event. Which fields are meaningful depends on kind (see each field).
struct Event {
  uint64_t number = 0;  ///< 1-based position in record order
  int32_t tid = 0;      ///< recorded tid of the task
  EventKind kind = EventKind::Syscall;
  /// Syscall: registers at syscall entry (orig_rax is the number). Signal: at delivery.
  /// Exec: right after the exec. Rdtsc, Cpuid: after emulation (rip past the instruction).
  Registers regs{};
  int64_t result = 0;  ///< Syscall: the return value (rax at exit)
  /// Syscall fork/vfork/clone: recorded tid of the new task (rewind's number for it; `result`
  /// is the parent's number for it, which differs inside a PID namespace).
  int32_t child_tid = 0;
  /// Syscall fork/vfork/clone: the new task's own tid (in its own PID namespace: what
  /// CLONE_CHILD_SETTID writes), when it differs from `result`; else 0.
  int32_t child_own_tid = 0;
  OutputStream output = OutputStream::None;  ///< Syscall write-like: where the bytes went
  /// Syscall write-like into a /proc/PID/mem file of a recorded process: the recorded tid of a
  /// task of that process (0 otherwise), and the bytes the kernel wrote into its memory at
  /// their address, which replay writes into the replayed process again. With
  /// writes_shared_file(): the file offset (addr) and the bytes the file held there after the
  /// call, which replay writes into its copy of file `shared_file`. Syscall ptrace or
  /// process_vm_writev from inside a PID namespace: the recorded tid of the task the call
  /// named by its number there (no bytes).
  int32_t written_tid = 0;
  MemoryRegion written_memory;
  std::string file;  ///< Syscall mmap of a file / Exec: saved file under files/
  /// Syscall mmap of a file shared with other processes (MAP_SHARED; record_syscall.cpp): the
  /// file's number among those of the recording (1-based, one per device and inode); replay
  /// maps one shared copy per number. Syscall write-like into such a file: its number, and
  /// the bytes in written_memory (also copy_file_range, splice, sendfile into it: the bytes
  /// copied); ftruncate, truncate or fallocate of it: its number, and its size after the
  /// call (bytes) in written_memory.addr. 0 otherwise.
  uint32_t shared_file = 0;
  std::vector<MemoryRegion> memory;    ///< Syscall: out-parameters. Exec: writable mappings.
  int32_t signo = 0;                   ///< Signal: signal number
  bool synchronous = false;            ///< Signal: raised by the instruction itself (fault)
  std::array<uint8_t, 128> siginfo{};  ///< Signal: the siginfo_t delivered
  /// Sched, and Signal when not synchronous: digest of the process's writable memory at the
  /// point (with `regs` it names the point without a hardware counter).
  MemoryDigest digest{};
  DigestExclusions exclusions;  ///< ranges left out of `digest` (buffers of syscalls in flight)
  /// Sched, and Signal when not synchronous: digest_stack_window of the same memory around
  /// regs.rsp, which replay tests before the full digest.
  MemoryDigest stack_digest{};
  /// Sched, and Signal when not synchronous: digest_register_windows of the same memory
  /// around the values of `regs`, which replay tests after the stack window's.
  MemoryDigest register_digest{};
  /// Sched, and Signal when not synchronous: point_stack_words at regs.rsp (at most
  /// kPointStackWords), which replay's trampoline compares in the task after the registers.
  std::vector<uint64_t> stack_words;
  int32_t status = 0;             ///< Exit: raw wait status (WIFEXITED/WIFSIGNALED)
  std::vector<Mapping> mappings;  ///< Exec: the address space after exec (no vdso/vvar)
  std::vector<std::string> argv;  ///< Exec: the new command line, for `rewind ps`
  /// Any kind: the records of the syscalls the task made through its syscall buffer since its
  /// previous event (preload/rewind_preload_abi.h); replay puts them in the buffer before
  /// running the task to this event.
  std::vector<uint8_t> buffered;

  /// The syscall number of a Syscall event (orig_rax).
  int64_t syscallno() const { return int64_t(regs.orig_rax); }
  /// Whether this is a write-like call into a file mapped shared, whose bytes written_memory
  /// holds, or a resize of such a file (shared_file set on a call other than mmap).
  bool writes_shared_file() const {
    return kind == EventKind::Syscall && shared_file != 0 && syscallno() != SYS_mmap;
  }
  /// Whether syscall `nr` sets a file's size (ftruncate, truncate, fallocate): on a file
  /// mapped shared, its event keeps the size after it (written_memory.addr), not bytes.
  static bool sets_file_size(int64_t nr) {
    return nr == SYS_ftruncate || nr == SYS_truncate || nr == SYS_fallocate;
  }
  /// Whether this event resizes a file mapped shared (writes_shared_file(), sets_file_size()).
  bool resizes_shared_file() const { return writes_shared_file() && sets_file_size(syscallno()); }
};

}  // namespace rwd
