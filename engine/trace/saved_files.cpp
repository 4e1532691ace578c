#include "engine/trace/saved_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <tuple>

#include "engine/errors.h"

namespace rwd {

std::vector<std::pair<uint64_t, uint64_t>> data_extents(int fd, uint64_t size) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (uint64_t at = 0; at < size;) {
    off_t data = ::lseek(fd, off_t(at), SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;  // only a hole from `at` on
    if (data < 0) return {{0, size}};       // no SEEK_DATA here
    off_t hole = ::lseek(fd, data, SEEK_HOLE);
    uint64_t end = hole < 0 || uint64_t(hole) > size ? size : uint64_t(hole);
    if (end <= uint64_t(data)) return {{0, size}};
    out.emplace_back(uint64_t(data), end);
    at = end;
  }
  return out;
}

SavedFileSum sum_of_fd(int fd, const std::string& what) {
  struct stat sb;
  if (::fstat(fd, &sb) != 0) throw_errno("stat " + what);
  SavedFileSum s;
  s.size = uint64_t(sb.st_size);
  XXH64_state_t* st = XXH64_createState();
  XXH64_reset(st, 0);
  char buf[1 << 16];
  try {
    for (const auto& [from, to] : data_extents(fd, s.size)) {
      uint64_t header[2] = {from, to - from};
      XXH64_update(st, header, sizeof header);
      for (uint64_t off = from; off < to;) {
        ssize_t n = ::pread(fd, buf, size_t(std::min<uint64_t>(sizeof buf, to - off)), off_t(off));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw_errno("read " + what);
        if (n == 0) break;
        XXH64_update(st, buf, size_t(n));
        off += uint64_t(n);
      }
    }
  } catch (...) {
    XXH64_freeState(st);
    throw;
  }
  s.xxh64 = XXH64_digest(st);
  XXH64_freeState(st);
  return s;
}

void append_file_sum(const std::string& trace_dir, const std::string& name, const SavedFileSum& s) {
  std::string path = trace_dir + "/" + kFileSumsFile;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno("open " + path);
  char line[512];
  int n = std::snprintf(line, sizeof line, "%s %llu %016llx\n", name.c_str(),
                        (unsigned long long)s.size, (unsigned long long)s.xxh64);
  bool ok = n > 0 && size_t(n) < sizeof line && ::write(fd, line, size_t(n)) == n;
  ::close(fd);
  if (!ok) throw Error("cannot write " + path);
}

namespace {

/// The sums files.sums lists, by saved name (an unreadable or malformed line is skipped:
/// the file it names is then not checked).
std::map<std::string, SavedFileSum> read_sums(const std::string& trace_dir) {
  std::map<std::string, SavedFileSum> sums;
  std::ifstream in(trace_dir + "/" + kFileSumsFile);
  std::string name;
  unsigned long long size;
  std::string hex;
  while (in >> name >> size >> hex) {
    char* end = nullptr;
    unsigned long long h = std::strtoull(hex.c_str(), &end, 16);
    if (hex.size() == 16 && end && *end == 0) sums[name] = {size, h};
  }
  return sums;
}

}  // namespace

void check_saved_file(const std::string& trace_dir, const std::string& name) {
  // Files verified by this process: (path, inode, size, mtime).
  static std::mutex mu;
  static std::set<std::tuple<std::string, ino_t, off_t, int64_t>> verified;
  std::string path = trace_dir + "/files/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw TraceError(path + ": saved file is missing from the trace");
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw TraceError(path + ": saved file is not a regular file (replaced?)");
  }
  auto key = std::make_tuple(path, st.st_ino, st.st_size,
                             int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
  {
    std::lock_guard lock(mu);
    if (verified.count(key)) {
      ::close(fd);
      return;
    }
  }
  auto sums = read_sums(trace_dir);
  auto it = sums.find(name);
  if (it == sums.end()) {
    ::close(fd);
    return;
  }
  if (uint64_t(st.st_size) != it->second.size) {
    ::close(fd);
    throw TraceError(path + ": " + std::to_string(st.st_size) + " bytes, the recording saved " +
                     std::to_string(it->second.size) + " (truncated or replaced saved file)");
  }
  SavedFileSum now;
  try {
    now = sum_of_fd(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (now.xxh64 != it->second.xxh64)
    throw TraceError(path + ": checksum differs from the one recorded (altered saved file)");
  std::lock_guard lock(mu);
  verified.insert(key);
}

}  // namespace rwd
