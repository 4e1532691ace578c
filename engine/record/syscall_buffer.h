// The recorder's side of syscall buffering (preload/README.md): where librewind_preload.so is,
// the environment that loads it, and a task's registered buffer (flushing it into the trace,
// leaving it out of memory digests, the code where the task must not be stopped).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ticks/memory_digest.h"

namespace rwd {

/// A task's buffer, from its register_buffer call (RWD_SYS_REGISTER_BUFFER). Tasks created by
/// fork/vfork (not threads) start with their parent's, at the same address.
struct SyscallBuffer {
  uint64_t addr = 0;  ///< 0: none registered
  uint64_t defer_start = 0, defer_end = 0;

  /// Checks register_buffer's arguments (rdi..r10); returns 0 or a negative errno (-EINVAL).
  int64_t set_from_call(uint64_t buffer, uint64_t size, uint64_t defer_lo, uint64_t defer_hi);
  /// True when `rip` is where the task's state differs between record and replay (inside the
  /// buffered-syscall primitive or on the untraced page): no point may be recorded there.
  bool must_not_stop_at(uint64_t rip) const;
  /// The digest exclusion: the control words and records, which replay fills in ahead.
  std::pair<uint64_t, uint64_t> digest_exclusion() const;
  /// Reads the records written since the last call and empties the buffer (pos = 0). Returns
  /// the bytes (empty when none). Throws SystemError when the task's memory cannot be read.
  std::vector<uint8_t> take_records(pid_t tid) const;
};

/// librewind_preload.so next to the running rewind executable, or "" when it is not there.
std::string preload_library_path();

/// The environment for a recorded program with buffering: `env` with the library prepended to
/// LD_PRELOAD and REWIND_OUTPUT_FILES naming `outputs`, the files behind rewind's stdout and
/// stderr ("DEV:INO,DEV:INO"; their writes stay traced, for replay to print again).
std::vector<std::string> preload_environment(const std::vector<std::string>& env,
                                             const std::string& library,
                                             const std::vector<const struct stat*>& outputs);

}  // namespace rwd
