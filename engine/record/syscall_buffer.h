// The recorder's side of syscall buffering (preload/README.md): where librewind_preload.so is,
// the environment that loads it, and a task's registered buffer (flushing it into the trace,
// leaving it out of memory digests, the code where the task must not be stopped).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/arch/siginfo.h"
#include "engine/ticks/memory_digest.h"
#include "engine/trace/event.h"

namespace rwd {

/// A task's buffer, from its register_buffer call (RWD_SYS_REGISTER_BUFFER). Tasks created by
/// fork/vfork (not threads) start with their parent's, at the same address.
struct SyscallBuffer {
  uint64_t addr = 0;  ///< 0: none registered
  uint64_t defer_start = 0, defer_end = 0;
  /// The task's desched counter (RWD_FEATURE_DESCHED), or -1. Its signals are rewind's, never
  /// the program's. A fork child has its parent's number: the counter still signals the
  /// parent's thread.
  int desched_fd = -1;
  /// The recorder's own descriptor for that counter (pidfd_getfd(2)), shared by copies of
  /// this buffer and closed with the last: the counter signals the task at every context
  /// switch while enabled, its ptrace stops included, so the recorder disables it itself.
  std::shared_ptr<const int> desched_copy;
  /// The syscall number of a buffered call the recorder aborted (it waited), whose abort mark
  /// the task's next event carries; -1 when none.
  int64_t aborted_nr = -1;

  /// Checks register_buffer's arguments (rdi..r9: buffer, size, defer range, features,
  /// desched fd) of task `tid` in process `pid`; returns 0 (desched counter in use), 1 (in
  /// use without it: rewind could not take a copy of the counter) or a negative errno.
  int64_t set_from_call(pid_t pid, pid_t tid, uint64_t buffer, uint64_t size, uint64_t defer_lo,
                        uint64_t defer_hi, uint64_t features, uint64_t desched);
  /// At a stop of task `tid` for its desched counter's signal: disables the counter (its
  /// library enables it again for its next call that may block). When the library had it
  /// enabled, this very stop was a context switch the counter signals too: waits (a few
  /// milliseconds at most) until that signal is pending, so that it stops the task at once
  /// when it resumes, not later, in a traced syscall it would interrupt.
  /// Returns whether the library had it enabled.
  bool settle_desched(pid_t tid) const;
  /// At a desched stop of task `tid` before the buffered call the counter was enabled for
  /// (settle_desched turned it off): enables it again, as the library left it, unless the
  /// counter's signal is pending (that stop comes first, and this is asked again there, or
  /// the counter would signal every stop). Returns whether it did.
  bool rearm_desched(pid_t tid) const;
  /// True for a signal from the task's desched counter (rewind_preload_abi.h,
  /// RWD_DESCHED_SIGNAL): an I/O signal (POLL_IN) naming the counter's descriptor.
  bool is_desched_signal(int sig, const SigInfo& si) const;
  /// Appends the pending abort mark (aborted_nr) to `records`, if any, and clears it.
  void add_abort_mark(std::vector<uint8_t>& records);
  /// True when `rip` is where the task's state differs between record and replay (inside the
  /// buffered-syscall primitive or on the untraced page): no point may be recorded there.
  bool must_not_stop_at(uint64_t rip) const;
  /// The digest exclusion: the control words and records (buffer_digest_exclusion).
  std::pair<uint64_t, uint64_t> digest_exclusion() const;
  /// Reads the records written since the last call, appends them to `out` (nothing when
  /// none) and empties the buffer (pos = 0). Throws SystemError when the task's memory cannot
  /// be read, with `out` as it was.
  void take_records(pid_t tid, std::vector<uint8_t>& out) const;
};

/// Writes the int `value` at `at` in the memory of task `tid`: one of librewind_preload.so's
/// switches, whose addresses its buffer header gives (library_switch, fd_cache_switch,
/// turns_switch). Returns the region written, to keep as an event's memory so that replay
/// writes the same there; nullopt when the memory cannot be written (the task is gone, and
/// no library reads the switch then).
std::optional<MemoryRegion> write_library_switch(pid_t tid, uint64_t at, int32_t value);

/// librewind_preload.so next to the running rewind executable, or "" when it is not there.
std::string preload_library_path();

/// The environment for a recorded program with buffering: `env` with the library prepended to
/// LD_PRELOAD and REWIND_OUTPUT_FILES naming `outputs`, the files behind rewind's stdout and
/// stderr ("DEV:INO,DEV:INO"; their writes stay traced, for replay to print again), and
/// REWIND_PROC_DEV naming `proc_dev`, /proc's device (writes into its files stay traced:
/// proc_mem_writes.cpp).
std::vector<std::string> preload_environment(const std::vector<std::string>& env,
                                             const std::string& library,
                                             const std::vector<const struct stat*>& outputs,
                                             std::optional<dev_t> proc_dev);

}  // namespace rwd
