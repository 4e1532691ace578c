#include "file_saver.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

#include "engine/errors.h"
#include "engine/os/proc.h"

namespace rwd {

namespace {
bool is_system_path(const std::string& p) {
  for (const char* prefix : {"/usr/", "/lib/", "/lib64/", "/bin/", "/sbin/", "/opt/"})
    if (p.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string base_name(std::string p) {
  p = strip_deleted_suffix(p);
  std::string b = p.substr(p.find_last_of('/') + 1);
  for (char& c : b)
    if (c == '/' || c == ' ' || c == ':' || c == '\\') c = '_';
  if (b.empty() || b == "." || b == "..") b = "file";
  if (b.size() > 64) b.resize(64);
  return b;
}

/// Copies bytes [from, to) of `in` to the same place in `out`. Throws SystemError.
void copy_range(int in, int out, off_t from, off_t to, const std::string& what, uint64_t& copied) {
  off_t at = from;
  while (at < to) {
    off_t src = at, dst = at;
    ssize_t n = copy_file_range(in, &src, out, &dst, size_t(std::min<off_t>(to - at, 1 << 30)), 0);
    if (n > 0) {
      at += n;
      copied += uint64_t(n);
      continue;
    }
    if (n == 0) return;  // the file shrank meanwhile
    if (errno == EINTR) continue;
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
      throw_errno("copy " + what);
    break;  // fall back to read/write
  }
  char buf[1 << 16];
  while (at < to) {
    ssize_t n = ::pread(in, buf, size_t(std::min<off_t>(to - at, sizeof buf)), at);
    if (n == 0) return;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("read " + what);
    }
    for (ssize_t off = 0; off < n;) {
      ssize_t w = ::pwrite(out, buf + off, size_t(n - off), at + off);
      if (w < 0) throw_errno("write copy of " + what);
      off += w;
    }
    at += n;
    copied += uint64_t(n);
  }
}

/// Copies open file `in` (`size` bytes) into `out`, keeping its holes: only the data extents
/// are written, and the copy is given the file's size. Refuses before writing when the data
/// would leave less than 5% of `out`'s file system (at most kKeepFree bytes) free: a trace
/// never fills the disk. Throws SystemError, Error.
void copy_fd(int in, int out, off_t size, const std::string& what, uint64_t& copied) {
  auto extents = data_extents(in, uint64_t(size));
  uint64_t data = 0;
  for (const auto& [from, to] : extents) data += uint64_t(to - from);
  struct statvfs fs;
  if (::fstatvfs(out, &fs) == 0) {
    constexpr uint64_t kKeepFree = 256ull << 20;
    uint64_t avail = uint64_t(fs.f_bavail) * fs.f_frsize;
    uint64_t keep = std::min<uint64_t>(kKeepFree, uint64_t(fs.f_blocks) * fs.f_frsize / 20);
    if (data + keep > avail)
      throw Error("saving " + what + " (" + std::to_string(data >> 20) +
                  " MiB of data) would fill the trace's file system (" +
                  std::to_string(avail >> 20) + " MiB free)");
  }
  for (const auto& [from, to] : extents) copy_range(in, out, off_t(from), off_t(to), what, copied);
  if (::ftruncate(out, size) != 0) throw_errno("size the copy of " + what);
}
}  // namespace

int FileSaver::open_regular(const std::string& source, const std::string& path, struct stat& st) {
  int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw_errno("open " + path + " to save it in the trace");
  if (::fstat(in, &st) != 0) {
    ::close(in);
    throw_errno("stat " + path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(in);
    return -1;
  }
  return in;
}

std::string FileSaver::save(const std::string& source, const std::string& path) {
  struct stat st;
  int in = open_regular(source, path, st);
  if (in < 0) return "";
  auto key = std::make_tuple(st.st_dev, st.st_ino, st.st_size,
                             int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
  std::string name;
  if (auto it = saved_.find(key); it != saved_.end()) {
    name = it->second;
  } else {
    try {
      name = store(in, st, path, true);
    } catch (...) {
      ::close(in);
      throw;
    }
    saved_[key] = name;
  }
  ::close(in);
  return name;
}

FileSaver::SharedSave FileSaver::save_shared(const std::string& source, const std::string& path) {
  struct stat st;
  int in = open_regular(source, path, st);
  if (in < 0) return {};
  SharedSave out;
  try {
    auto [it, added] = shared_numbers_.try_emplace({st.st_dev, st.st_ino}, 0);
    if (added) it->second = uint32_t(shared_numbers_.size());
    out.number = it->second;
    SavedFileSum sum = sum_of_fd(in, path);
    auto key = std::make_tuple(st.st_dev, st.st_ino, off_t(sum.size), int64_t(sum.xxh64));
    if (auto s = shared_saved_.find(key); s != shared_saved_.end()) {
      out.name = s->second;
    } else {
      out.name = store(in, st, path, false);  // changed in place: never linked
      shared_saved_[key] = out.name;
    }
  } catch (...) {
    ::close(in);
    throw;
  }
  ::close(in);
  return out;
}

std::string FileSaver::store(int in, const struct stat& st, const std::string& path,
                             bool may_link) {
  std::string name = base_name(path) + "-" + std::to_string(counter_++);
  std::string dest = dir_ + "/" + name;
  bool linked = false;
  // A hard link keeps the file's mode: a setuid or setgid program exec'd from the trace would
  // run with ASLR on (the kernel's secure exec), in another address space than recorded.
  // Those are copied, without the bits.
  if (may_link && is_system_path(path) && !(st.st_mode & (S_ISUID | S_ISGID))) {
    struct stat orig;
    if (::stat(path.c_str(), &orig) == 0 && orig.st_dev == st.st_dev && orig.st_ino == st.st_ino)
      linked = ::linkat(AT_FDCWD, path.c_str(), AT_FDCWD, dest.c_str(), AT_SYMLINK_FOLLOW) == 0;
  }
  // Its size and checksum, for the replay to tell a truncated or replaced copy: of the copy
  // itself (the sum covers its data extents, and a copy's holes need not fall where the
  // original's did), or of the linked file, which is the same file.
  SavedFileSum saved;
  if (linked) {
    saved = sum_of_fd(in, path);
  } else {
    int out = ::open(dest.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (out < 0) throw_errno("create " + dest);
    try {
      if (::ioctl(out, FICLONE, in) != 0) copy_fd(in, out, st.st_size, path, copied_);
      saved = sum_of_fd(out, dest);
    } catch (...) {
      ::close(out);
      ::unlink(dest.c_str());  // no partial copy left in the trace
      throw;
    }
    ::fchmod(out, 0555);  // executables are exec'd from the trace at replay
    ::close(out);
  }
  append_file_sum(dir_.substr(0, dir_.rfind('/')), name, saved);
  return name;
}

}  // namespace rwd
