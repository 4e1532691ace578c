// Parsing /proc/PID/maps (proc(5)).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rwd {

/// One line of /proc/PID/maps.
struct ProcMapping {
  uint64_t start = 0, end = 0, offset = 0;
  bool read = false, write = false, exec = false, shared = false;
  uint64_t inode = 0;
  std::string path;  ///< file path or label such as "[stack]"; may end in " (deleted)"
  /// PROT_* bits for mmap(2).
  int prot() const;
  /// True for kernel-provided special mappings rewind leaves alone ([vdso], [vvar], ...).
  bool is_special() const;
};

/// A path from /proc without the " (deleted)" the kernel appends to unlinked files (proc(5)).
std::string strip_deleted_suffix(std::string path);

/// Reads /proc/PID/maps. Throws SystemError.
std::vector<ProcMapping> read_proc_maps(pid_t pid);

}  // namespace rwd
