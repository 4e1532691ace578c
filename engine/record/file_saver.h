// Saves the files a recorded program maps into memory into the trace's files/ directory
// (DESIGN.md "Recording"), so the trace replays after they change or vanish.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace rwd {

/// Saves each distinct file once per trace. System files (under /usr, /lib, /bin, /sbin,
/// /opt) are hard-linked when the trace is on the same file system: package updates replace
/// such files rather than rewrite them, so the link keeps the recorded version. Every other
/// file is cloned (FICLONE, copy-on-write) or else copied, because it may be edited in place.
class FileSaver {
 public:
  explicit FileSaver(std::string files_dir) : dir_(std::move(files_dir)) {}
  /// Saves the file reachable at `source` (e.g. /proc/TID/fd/N, /proc/TID/map_files/A-B),
  /// whose original path is `path` (for naming and linking). Returns the saved name under
  /// files/, or "" when `source` is not a regular file (a device: mapped as anonymous).
  /// Throws SystemError when the file cannot be read or written.
  std::string save(const std::string& source, const std::string& path);
  /// Number of bytes copied (not linked) so far.
  uint64_t bytes_copied() const { return copied_; }

 private:
  std::string dir_;
  std::map<std::tuple<dev_t, ino_t, off_t, int64_t>, std::string> saved_;
  uint64_t copied_ = 0;
  int counter_ = 0;
};

}  // namespace rwd
