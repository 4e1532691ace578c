#include "adapter/gdb/gdb_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <vector>

#include "adapter/gdb/gdb_packet.h"

namespace rwd::gdb {

namespace {

/// gdb's File-I/O errno numbers (gdb manual, "Errno Values"); 9999 is EUNKNOWN.
int fileio_errno(int e) {
  switch (e) {
    case EPERM:
      return 1;
    case ENOENT:
      return 2;
    case EINTR:
      return 4;
    case EBADF:
      return 9;
    case EACCES:
      return 13;
    case EFAULT:
      return 14;
    case EBUSY:
      return 16;
    case EEXIST:
      return 17;
    case ENODEV:
      return 19;
    case ENOTDIR:
      return 20;
    case EISDIR:
      return 21;
    case EINVAL:
      return 22;
    case ENFILE:
      return 23;
    case EMFILE:
      return 24;
    case EFBIG:
      return 27;
    case ENOSPC:
      return 28;
    case ESPIPE:
      return 29;
    case EROFS:
      return 30;
    case ENAMETOOLONG:
      return 91;
    default:
      return 9999;
  }
}

/// "F-1,ERRNO", the errno in hex as every number of these replies.
std::string failed(int e) {
  return "F-1," + hex_number(uint64_t(fileio_errno(e)));
}

/// "F" and a result (a descriptor or a byte count, never negative), in hex.
std::string result(size_t v) {
  return "F" + hex_number(v);
}

/// Splits "a,b,c" into its fields.
std::vector<std::string_view> fields(std::string_view s) {
  std::vector<std::string_view> out;
  for (;;) {
    size_t comma = s.find(',');
    out.push_back(s.substr(0, comma));
    if (comma == std::string_view::npos) return out;
    s.remove_prefix(comma + 1);
  }
}

std::optional<std::string> hex_text(std::string_view hex) {
  auto bytes = from_hex(hex);
  if (!bytes || bytes->size() > PATH_MAX) return std::nullopt;
  return std::string(bytes->begin(), bytes->end());
}

/// A path under /proc naming a process or one of its threads: "/proc/PID/NAME" or
/// "/proc/PID/task/TID/NAME" (decimal ids).
struct ProcPath {
  pid_t pid = 0, tid = 0;
  std::string name;
};

std::optional<int> decimal(std::string_view& s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data() || v <= 0) return std::nullopt;
  s.remove_prefix(size_t(end - s.data()));
  return v;
}

std::optional<ProcPath> proc_path(std::string_view path) {
  if (path.rfind("/proc/", 0) != 0) return std::nullopt;
  std::string_view s = path.substr(6);
  ProcPath p;
  auto pid = decimal(s);
  if (!pid || s.empty() || s[0] != '/') return ProcPath{};  // /proc/self and the like
  p.pid = *pid;
  s.remove_prefix(1);
  if (s.rfind("task/", 0) == 0) {
    s.remove_prefix(5);
    auto tid = decimal(s);
    if (!tid || s.empty() || s[0] != '/') return ProcPath{};
    p.tid = *tid;
    s.remove_prefix(1);
  }
  p.name = std::string(s);
  return p;
}

}  // namespace

HostFiles::~HostFiles() {
  for (auto& [n, f] : open_)
    if (f.fd >= 0) ::close(f.fd);
}

std::string HostFiles::handle(std::string_view packet) {
  std::string_view op = packet.substr(6);  // after "vFile:"
  size_t colon = op.find(':');
  std::string_view args = colon == std::string_view::npos ? "" : op.substr(colon + 1);
  op = op.substr(0, colon);
  if (op == "setfs") return "F0";  // /proc paths name their process; others are the host's
  if (op == "open") return open(args);
  if (op == "pread") return pread(args);
  if (op == "close") return close(args);
  if (op == "readlink") return readlink(args);
  return "";  // pwrite, unlink, fstat: not served
}

std::string HostFiles::open(std::string_view args) {
  auto f = fields(args);
  if (f.size() != 3) return failed(EINVAL);
  auto path = hex_text(f[0]);
  auto flags = parse_hex(f[1]);
  if (!path || !flags) return failed(EINVAL);
  if (*flags != 0) return failed(EROFS);  // read-only: the recording is not to be changed
  if (open_.size() >= 64) return failed(EMFILE);
  Open file;
  if (auto proc = proc_path(*path)) {
    if (proc->pid == 0) return failed(ENOENT);
    auto text = proc_file_(proc->pid, proc->tid, proc->name);
    if (!text) return failed(ENOENT);
    file.text = std::move(*text);
  } else {
    file.fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC);
    if (file.fd < 0) return failed(errno);
  }
  int n = next_++;
  open_[n] = std::move(file);
  return result(size_t(n));
}

std::string HostFiles::pread(std::string_view args) {
  auto f = fields(args);
  if (f.size() != 3) return failed(EINVAL);
  auto fd = parse_hex(f[0]), count = parse_hex(f[1]), offset = parse_hex(f[2]);
  if (!fd || !count || !offset) return failed(EINVAL);
  auto it = open_.find(int(*fd));
  if (*fd > uint64_t(INT_MAX) || it == open_.end()) return failed(EBADF);
  size_t want = size_t(std::min<uint64_t>(*count, 16384));
  std::string data;
  if (it->second.fd < 0) {
    if (*offset < it->second.text.size()) data = it->second.text.substr(*offset, want);
  } else {
    if (*offset > uint64_t(LLONG_MAX)) return failed(EINVAL);
    data.resize(want);
    ssize_t got = ::pread(it->second.fd, data.data(), want, off_t(*offset));
    if (got < 0) return failed(errno);
    data.resize(size_t(got));
  }
  return result(data.size()) + ";" + data;
}

std::string HostFiles::close(std::string_view args) {
  auto fd = parse_hex(args);
  auto it = fd && *fd <= uint64_t(INT_MAX) ? open_.find(int(*fd)) : open_.end();
  if (it == open_.end()) return failed(EBADF);
  if (it->second.fd >= 0) ::close(it->second.fd);
  open_.erase(it);
  return "F0";
}

std::string HostFiles::readlink(std::string_view args) {
  auto path = hex_text(args);
  if (!path) return failed(EINVAL);
  std::string target;
  if (auto proc = proc_path(*path)) {
    auto text = proc->pid ? proc_file_(proc->pid, proc->tid, proc->name) : std::nullopt;
    if (!text || proc->name != "exe") return failed(ENOENT);
    target = *text;
  } else {
    target.resize(PATH_MAX);
    ssize_t n = ::readlink(path->c_str(), target.data(), target.size());
    if (n < 0) return failed(errno);
    target.resize(size_t(n));
  }
  return result(target.size()) + ";" + target;
}

}  // namespace rwd::gdb
