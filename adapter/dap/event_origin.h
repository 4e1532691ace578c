// Who made each recorded event happen, for a timeline view: the program, the dynamic loader
// starting it (or loading a library later), or rewind's own preload library setting up its
// syscall buffer. A timeline hides rewind's events and folds the loader's.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "engine/trace/event.h"

namespace rwd {

/// Where an event came from. Program is the default: anything not known to be the loader's
/// or rewind's.
enum class EventOrigin : uint8_t { Program, Loader, Rewind };

/// "program", "loader" or "rewind": the names rewind/timeline uses (docs/dap.md).
const char* event_origin_name(EventOrigin origin);

/// Tells the origin of each event of a trace, fed in record order. How:
/// - Loader: a syscall, rdtsc, cpuid or signal whose rip lies in the text of the dynamic loader
///   (ld-linux*.so*, as the task's exec mapped it).
/// - Rewind: rewind's private syscalls (preload/rewind_preload_abi.h, numbers 1000 and up),
///   the preload library's untraced page (mmap and mprotect at RWD_UNTRACED_PAGE), each
///   task's registration of its buffer (preload/hook.c rwd_register_thread: the buffer's mmap,
///   the desched counter's perf_event_open, gettid and fcntl calls, the register call, and the
///   close or munmap when it fails), and the mprotects of libc's patching that follow the first
///   registration (preload/patch.c). Those calls are told apart from a program's by their
///   arguments and order (the buffer's size, the register call naming that buffer), not by
///   rip: a program's calls forwarded by the preload library come from the same instruction.
class EventOriginTracker {
 public:
  /// Takes the next event. It may also settle the origin of earlier ones (the calls before a
  /// register call).
  void add(const Event& e);
  /// The origin of each event taken, in order (final once every event is taken).
  const std::vector<EventOrigin>& origins() const { return origins_; }

 private:
  struct Range {
    uint64_t start, end;
  };
  /// What is tracked per task.
  struct Task {
    std::shared_ptr<std::vector<Range>> loader;  ///< the loader's text in the task's process
    std::vector<size_t> since_buffer;            ///< the task's events since a buffer-like mmap
    uint64_t buffer = 0;                         ///< that mmap's result (0: none pending)
    bool untraced_page_set_up = false;           ///< the last registration was the preload's start
    int patch_mprotects_left = 0;                ///< libc patching mprotects still expected
    /// Between a registration announcing RWD_FEATURE_PATCH_END and RWD_SYS_PATCHED: every
    /// event of the task is the library's patching (traces before that feature count the
    /// patching's four mprotects instead).
    bool patching = false;
    int64_t close_fd = -1;      ///< a failed registration closes this descriptor next
    uint64_t unmap_buffer = 0;  ///< a failed registration unmaps this buffer next
  };
  Task& task(pid_t tid);
  bool in_loader(const Task& t, uint64_t rip) const;
  std::map<pid_t, Task> tasks_;
  std::vector<EventOrigin> origins_;
};

}  // namespace rwd
