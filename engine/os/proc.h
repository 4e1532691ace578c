// Everything rewind reads from /proc about a task or process (proc(5)): its mappings, its
// scheduler state, its signal masks, its auxiliary vector and its command line.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rwd {

/// One line of /proc/PID/maps.
struct ProcMapping {
  uint64_t start = 0, end = 0, offset = 0;
  bool read = false, write = false, exec = false, shared = false;
  uint64_t inode = 0;
  uint64_t dev = 0;  ///< the file's device (makedev of the line's major:minor; 0 for none)
  std::string path;  ///< file path or label such as "[stack]"; may end in " (deleted)"
  /// PROT_* bits for mmap(2).
  int prot() const;
  /// True for kernel-provided special mappings rewind leaves alone ([vdso], [vvar], ...).
  bool is_special() const;
  /// Same range, offset, permissions, file and path.
  bool operator==(const ProcMapping&) const = default;
};

/// A path from /proc without the " (deleted)" the kernel appends to unlinked files (proc(5)).
std::string strip_deleted_suffix(std::string path);

/// Whether `path` (from /proc/PID/maps or as the program named it) is librewind_preload.so:
/// its last component starts with that name, which also takes a replay's saved copy
/// files/librewind_preload.so-N (trace-format.md) and a path ending in " (deleted)".
bool is_preload_library(std::string_view path);

/// The addresses [lo, hi) that librewind_preload.so's mappings span in `maps`; {0, 0} when it
/// is not mapped. A replay maps the trace's saved copy: files/librewind_preload.so-N
/// (trace-format.md).
std::pair<uint64_t, uint64_t> preload_library_range(const std::vector<ProcMapping>& maps);

/// Reads /proc/PID/maps. Throws SystemError. Mappings whose protection rewind changed for a
/// while (set_mappings_as_before) are reported as they were.
std::vector<ProcMapping> read_proc_maps(pid_t pid);

/// Reads /proc/PID/maps as the kernel has it now (with the protection rewind gave for a
/// while). Throws SystemError.
std::vector<ProcMapping> read_proc_maps_now(pid_t pid);

/// Makes read_proc_maps of process `pid` (or of one of `ids`, its tasks) report `originals`
/// in place of whatever lies in their ranges now: rewind made pages in them read-only for a
/// while (engine/replay/watched_pages.h), and what compares or hashes mappings must not see
/// that. Replaces what was set for `pid` before.
void set_mappings_as_before(pid_t pid, const std::vector<pid_t>& ids,
                            std::vector<ProcMapping> originals);
/// Stops reporting process `pid`'s mappings as before (their protection is their own again).
void clear_mappings_as_before(pid_t pid);

/// Whether address `addr` of process `pid` lies in a mapping of a file whose base name
/// starts with `prefix` (read from /proc/PID/maps; false when none maps it).
bool maps_file_named(pid_t pid, uint64_t addr, std::string_view prefix);

/// Task `tid`'s ids in each PID namespace it is in, from the one /proc belongs to (rewind's)
/// down to its own (the "NSpid:" line of /proc/TID/status, proc(5)); empty when it is gone.
std::vector<pid_t> ns_pids(pid_t tid);

/// How many seccomp filters act on thread `tid` (the "Seccomp_filters:" line of
/// /proc/TID/status, Linux 5.9 and later: proc(5)); -1 when the kernel does not say, or the
/// task is gone.
int seccomp_filter_count(pid_t tid);

/// The peak resident set of process `pid`'s current memory, in bytes (the "VmHWM:" line of
/// /proc/PID/status, proc(5)); 0 when unreadable. Unlike getrusage(2)'s ru_maxrss, which
/// execve(2) keeps, it does not count the memory of the process that exec'd it.
uint64_t peak_resident_bytes(pid_t pid);

/// Whether task `tid` is in rewind's own PID namespace (its /proc/TID/ns/pid link names the
/// same namespace as /proc/self/ns/pid, namespaces(7)): then it knows every task by rewind's
/// numbers. False when it is gone.
bool in_rewinds_pid_namespace(pid_t tid);

/// Task `tid`'s number as task `viewer` knows it: its id in viewer's PID namespace. A task is
/// visible in its own namespace and in each ancestor of it (pid_namespaces(7)); elsewhere, as
/// the kernel reports such a task, 0. Also 0 when either task is gone. A viewer in rewind's
/// own namespace knows every task by rewind's number.
pid_t pid_seen_by(pid_t viewer, pid_t tid);

/// "/proc/TID/fd/FD": task `tid`'s descriptor `fd` as a path this process can stat, read
/// through its link, or open again (proc(5)).
inline std::string fd_path(pid_t tid, int fd) {
  return "/proc/" + std::to_string(tid) + "/fd/" + std::to_string(fd);
}

/// Where the symbolic link `path` points (readlink(2)): a path, or for a descriptor of
/// /proc/TID/fd what proc(5) shows there ("anon_inode:[perf_event]", "pipe:[123]"); "" when
/// it cannot be read.
std::string link_target(const std::string& path);

/// What /proc/TID/fdinfo/FD says of a descriptor (proc(5)): its status flags (O_RDWR,
/// O_APPEND..., the "flags:" line, octal) and its file offset in bytes (the "pos:" line);
/// -1 each where the task has no such descriptor.
struct FdInfo {
  int flags = -1;
  int64_t pos = -1;
};
/// Reads the FdInfo of task `tid`'s descriptor `fd`.
FdInfo fd_info(pid_t tid, int fd);

/// The status flags of task `tid`'s descriptor `fd` (FdInfo::flags), or -1.
inline int fd_status_flags(pid_t tid, int fd) {
  return fd_info(tid, fd).flags;
}

/// The state letter of task `tid` ("R", "S", "D", "Z", "X", "t"...: the field after the
/// command name in /proc/TID/stat), or '\0' when the task is gone.
char proc_task_state(pid_t tid);

/// When process (or task) `pid` started, in clock ticks after boot (/proc/PID/stat field 22,
/// proc(5)): with the pid, what tells a process from a later one given the same pid. 0 when
/// it is gone.
uint64_t proc_start_time(pid_t pid);

/// Where process `pid`'s heap starts: the program break brk(2) moves up from (/proc/PID/stat
/// field 47, start_brk, proc(5); field 48 is arg_start, on the stack). 0 when it is gone.
uint64_t proc_brk_start(pid_t pid);

/// Signal `sig`'s bit in a kernel signal mask, as /proc/TID/status shows one and
/// PTRACE_GETSIGMASK gives it (bit n-1 stands for signal n, proc(5)).
constexpr uint64_t signal_bit(int sig) {
  return 1ull << (sig - 1);
}

/// The signal masks of task `tid` from /proc/TID/status (bit n-1 stands for signal n); all
/// zero when the task is gone.
struct ProcSignals {
  uint64_t pending = 0;         ///< SigPnd: pending for this thread
  uint64_t shared_pending = 0;  ///< ShdPnd: pending for its process
  uint64_t blocked = 0;         ///< SigBlk
  uint64_t ignored = 0;         ///< SigIgn
  uint64_t caught = 0;          ///< SigCgt: a handler is installed
};
ProcSignals read_proc_signals(pid_t tid);

/// The raw auxiliary vector of process `pid` (/proc/PID/auxv: pairs of u64 type and value,
/// ending with AT_NULL). Throws SystemError.
std::vector<uint8_t> read_proc_auxv(pid_t pid);

/// The command line of task `tid` (/proc/TID/cmdline split at its NULs); empty when gone.
std::vector<std::string> read_proc_cmdline(pid_t tid);

/// The real user id of task `tid` (/proc/TID/status "Uid:"); rewind's own when unreadable.
uint32_t task_real_uid(pid_t tid);

/// The children of process `pid` that its wait(2) may report, zombies included: those of each
/// of its threads (/proc/PID/task/TID/children, proc(5)). Empty when it is gone.
std::vector<pid_t> process_children(pid_t pid);

}  // namespace rwd
