// Reading and writing a stopped tracee's memory (process_vm_readv, /proc/PID/mem).
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <vector>

namespace rwd {

/// Reads up to n bytes at addr; stops early at an unmapped page and returns what was read.
std::vector<uint8_t> read_memory(pid_t tid, uint64_t addr, size_t n);
/// read_memory into `out` (room for n bytes): returns the bytes read, fewer than n where it
/// stopped at an unreadable page.
size_t read_memory_into(pid_t tid, uint64_t addr, uint8_t* out, size_t n);
/// Reads exactly n bytes or throws SystemError.
void read_memory_exact(pid_t tid, uint64_t addr, void* out, size_t n);
/// Writes bytes through /proc/PID/mem (which also writes read-only private pages, as a
/// debugger does). Throws SystemError.
void write_memory(pid_t tid, uint64_t addr, const void* p, size_t n);

/// A tracee's /proc/PID/mem, opened on the first write and kept open for the next ones: a
/// series of writes into read-only code (the stand-ins of insn_patch.h, a few dozen a
/// process) costs one pwrite(2) each instead of an open, a write and a close. The tracee must
/// stay stopped, or at least its memory unchanged, while it is used.
class TraceeMemFile {
 public:
  explicit TraceeMemFile(pid_t tid) : tid_(tid) {}
  ~TraceeMemFile();
  TraceeMemFile(const TraceeMemFile&) = delete;
  TraceeMemFile& operator=(const TraceeMemFile&) = delete;
  /// Writes the `n` bytes at `p` to `addr` of the tracee's memory, read-only pages included.
  /// Throws SystemError when the file cannot be opened or the write falls short.
  void write(uint64_t addr, const void* p, size_t n);

 private:
  pid_t tid_;
  int fd_ = -1;
};

/// The most iovecs a vectored syscall takes (IOV_MAX, readv(2)).
inline constexpr uint64_t kMaxIovecs = 1024;
/// Reads an array of `count` iovecs at addr (at most kMaxIovecs). Throws SystemError.
std::vector<iovec> read_iovecs(pid_t tid, uint64_t addr, uint64_t count);
/// The first `n` bytes of the buffers `iov` names, in order (what a writev(2) of n bytes sent);
/// fewer where the buffers hold fewer. Throws SystemError.
std::vector<uint8_t> read_gathered(pid_t tid, const std::vector<iovec>& iov, uint64_t n);

}  // namespace rwd
