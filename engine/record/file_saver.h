// Saves the files a recorded program maps into memory into the trace's files/ directory
// (DESIGN.md "Recording"), so the trace replays after they change or vanish.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "engine/trace/saved_files.h"

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
  /// A file saved for a mapping shared with other processes (MAP_SHARED of a file open for
  /// writing): `name` under files/ ("" when not a regular file), and the file's `number`
  /// among such files of the recording (1-based, one per device and inode), by which replay
  /// shares one copy between the processes that map it (engine/replay/shared_files.h).
  struct SharedSave {
    std::string name;
    uint32_t number = 0;
  };
  /// Saves the file at `source` as save() does, for a shared mapping: as it is now, because
  /// writes through a mapping need not change its modification time. A copy is made only when
  /// its contents (size and XXH64) differ from every copy saved of it. Throws SystemError.
  SharedSave save_shared(const std::string& source, const std::string& path);
  /// The number save_shared gave the file of device `dev` and inode `ino`, 0 when no shared
  /// mapping of it was saved.
  uint32_t shared_number(dev_t dev, ino_t ino) const {
    auto it = shared_numbers_.find({dev, ino});
    return it == shared_numbers_.end() ? 0 : it->second;
  }
  /// Whether save_shared saved any file.
  bool saved_shared() const { return !shared_numbers_.empty(); }
  /// Number of bytes copied (not linked) so far.
  uint64_t bytes_copied() const { return copied_; }

 private:
  std::string dir_;
  /// Opens `source` and stats it into `st`; -1 when it is not a regular file. Throws
  /// SystemError.
  int open_regular(const std::string& source, const std::string& path, struct stat& st);
  /// Stores open file `in` (stat `st`, original `path`) under a new name, keeping its holes,
  /// and appends the sum of what was stored. A system file is hard-linked when `may_link`
  /// (not for a shared file: the program changes it in place). Returns the name. Throws
  /// SystemError, and Error when the copy would fill the trace's file system.
  std::string store(int in, const struct stat& st, const std::string& path, bool may_link);

  std::map<std::tuple<dev_t, ino_t, off_t, int64_t>, std::string> saved_;
  /// save_shared's copies by device, inode, size and XXH64; its file numbers.
  std::map<std::tuple<dev_t, ino_t, off_t, int64_t>, std::string> shared_saved_;
  std::map<std::pair<dev_t, ino_t>, uint32_t> shared_numbers_;
  uint64_t copied_ = 0;
  int counter_ = 0;
};

}  // namespace rwd
