// Reading and writing a stopped tracee's memory (process_vm_readv, /proc/PID/mem).
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>
#include <vector>

namespace rwd {

/// Reads up to n bytes at addr; stops early at an unmapped page and returns what was read.
std::vector<uint8_t> read_memory(pid_t tid, uint64_t addr, size_t n);
/// Reads exactly n bytes or throws SystemError.
void read_memory_exact(pid_t tid, uint64_t addr, void* out, size_t n);
/// Writes bytes through /proc/PID/mem (which also writes read-only private pages, as a
/// debugger does). Throws SystemError.
void write_memory(pid_t tid, uint64_t addr, const void* p, size_t n);

/// The most iovecs a vectored syscall takes (IOV_MAX, readv(2)).
inline constexpr uint64_t kMaxIovecs = 1024;
/// Reads an array of `count` iovecs at addr (at most kMaxIovecs). Throws SystemError.
std::vector<iovec> read_iovecs(pid_t tid, uint64_t addr, uint64_t count);

}  // namespace rwd
