// Files that recorded processes mapped shared (MAP_SHARED: SQLite's -shm index, LMDB's data
// file): the processes saw each other's writes through the file's pages, and the writes of
// write(2) and its kin. Replay gives each such file (Event::shared_file) one copy of its own,
// a memfd of the replayer that every replayed mapping of the file maps shared, set at each
// mapping to the contents the recorder saved then. rr's EmuFs plays this part.
//
// A checkpoint's stopped copies of the processes map the same memfds, which the replay goes
// on changing: a checkpoint keeps a snapshot of the copies' contents, put back when a replay
// continues from it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rwd {

/// The replay's copies of shared files, by the recording's file number.
class SharedFiles {
 public:
  SharedFiles() = default;
  ~SharedFiles();
  SharedFiles(const SharedFiles&) = delete;
  SharedFiles& operator=(const SharedFiles&) = delete;

  /// Makes the copy of file `number` (created on first use) hold what saved file
  /// `saved_path` holds, size included, and returns the path by which a replayed task opens
  /// it (/proc/PID/fd/N of the replayer). Only the 4 KiB blocks that differ are written, so
  /// the pages other processes map stay as they are where nothing changed. Throws
  /// SystemError.
  std::string sync(uint32_t number, const std::string& saved_path);
  /// Writes `bytes` at file offset `offset` (bytes) of the copy of file `number`, as a
  /// recorded write(2) into the file did (Event::writes_shared_file); the file grows as it
  /// did. Nothing where no copy exists yet: the next mapping syncs it. Throws SystemError.
  void write(uint32_t number, uint64_t offset, const std::vector<uint8_t>& bytes);
  /// Sets the size of the copy of file `number` to `size` bytes, as a recorded ftruncate(2)
  /// or fallocate(2) of the file did: pages past the end fault (SIGBUS) in the mappings, as
  /// they did. Nothing where no copy exists yet. Throws SystemError.
  void resize(uint32_t number, uint64_t size);
  /// Makes `length` bytes at `offset` of the copy of file `number` read as zeros, as a
  /// recorded fallocate(2) that punched a hole or zeroed a range did. Nothing where no copy
  /// exists yet. Throws SystemError.
  void zero(uint32_t number, uint64_t offset, uint64_t length);
  /// The contents of every copy at one moment: per file number, its size in bytes and its
  /// blocks of kSnapshotBlock bytes (the last one shorter), shared with the snapshot taken
  /// before where they did not change.
  struct Snapshot {
    struct File {
      uint64_t size = 0;
      std::vector<std::shared_ptr<const std::vector<uint8_t>>> blocks;
    };
    std::map<uint32_t, File> files;
  };
  /// Bytes of a snapshot's block.
  static constexpr uint64_t kSnapshotBlock = 64 * 1024;
  /// The most bytes the copies may hold, together, for snapshot() to take them.
  static constexpr uint64_t kSnapshotLimit = 64ull << 20;
  /// Whether any copy exists.
  bool empty() const { return fds_.empty(); }
  /// The contents of every copy now, or nullopt where they hold more than kSnapshotLimit
  /// bytes together. Throws SystemError.
  std::optional<Snapshot> snapshot();
  /// Gives each copy that `s` holds the size and contents it had then (only the blocks that
  /// differ are written). Copies made since are left as they are: the next mapping of their
  /// file syncs them. Throws SystemError.
  void restore(const Snapshot& s);
  /// The name /proc/PID/maps shows for a mapping of a copy (with " (deleted)" after it).
  static constexpr const char* kMapName = "/memfd:rewind-shared-file";

 private:
  std::map<uint32_t, int> fds_;  ///< memfd by file number
  Snapshot last_;                ///< the last snapshot, whose unchanged blocks the next shares
};

}  // namespace rwd
