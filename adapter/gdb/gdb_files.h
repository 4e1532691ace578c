// gdb's host I/O packets (gdb manual, "Host I/O Packets": vFile:setfs, open, pread, close,
// readlink), read-only. gdb reads /proc/PID/task/TID/maps through them to find a process's
// vDSO, and `info proc mappings` and `remote get` use them. /proc files of the trace's
// processes come from the replay (their recorded pids are not this machine's); other
// files are this machine's, as gdbserver and rr serve them.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace rwd::gdb {

/// Answers the vFile packets of one gdb connection.
class HostFiles {
 public:
  /// `proc_file(pid, tid, name)` gives the text of /proc/PID[/task/TID]/NAME of a traced
  /// process by its recorded ids (tid 0: the process's), or nothing when there is none.
  using ProcFile = std::function<std::optional<std::string>(pid_t, pid_t, std::string_view)>;
  explicit HostFiles(ProcFile proc_file) : proc_file_(std::move(proc_file)) {}
  ~HostFiles();
  HostFiles(const HostFiles&) = delete;
  HostFiles& operator=(const HostFiles&) = delete;

  /// The reply to `packet` (one starting "vFile:"): "F<result>[,<errno>][;<data>]", where
  /// errno is gdb's File-I/O number (gdb manual, "Errno Values"); the empty reply for a
  /// vFile operation not served (gdb then does without it).
  std::string handle(std::string_view packet);

 private:
  /// An open file: a host descriptor, or the text of a /proc file of the trace.
  struct Open {
    int fd = -1;
    std::string text;
  };
  std::string open(std::string_view args);
  std::string pread(std::string_view args);
  std::string close(std::string_view args);
  std::string readlink(std::string_view args);

  ProcFile proc_file_;
  std::map<int, Open> open_;
  int next_ = 1;
};

}  // namespace rwd::gdb
