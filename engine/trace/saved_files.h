// The sizes and checksums of the files a trace saved under files/ (trace file `files.sums`,
// docs/trace-format.md), so that a replay refuses a saved file that was truncated or
// replaced instead of failing later with a fault that names nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rwd {

inline constexpr const char* kFileSumsFile = "files.sums";

/// Size in bytes and XXH64 of a saved file's contents.
struct SavedFileSum {
  uint64_t size = 0;
  uint64_t xxh64 = 0;
};

/// The data extents of open file `fd` of `size` bytes, as [start, end) byte ranges, from
/// lseek(2)'s SEEK_DATA and SEEK_HOLE: a sparse file's holes are left out. The whole file where
/// the file system cannot tell.
std::vector<std::pair<uint64_t, uint64_t>> data_extents(int fd, uint64_t size);

/// The size of the open file `fd` and the XXH64 of its data extents (each one's offset and
/// length, then its bytes): a sparse file's holes are not read. Throws SystemError.
SavedFileSum sum_of_fd(int fd, const std::string& what);

/// Appends "NAME SIZE XXH64" to `trace_dir`/files.sums (one line per saved file, written
/// right after the file is saved). Throws SystemError.
void append_file_sum(const std::string& trace_dir, const std::string& name, const SavedFileSum& s);

/// Checks files/`name` of `trace_dir` against files.sums: throws TraceError naming the file
/// when its size or checksum differs ("truncated or replaced saved file"). A file the sums
/// do not list (a recording killed between saving a file and writing its line) is not
/// checked. Each file is hashed once per process while it stays unchanged (same inode, size
/// and modification time).
void check_saved_file(const std::string& trace_dir, const std::string& name);

}  // namespace rwd
