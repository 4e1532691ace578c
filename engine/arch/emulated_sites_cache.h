// The answers of the rdtsc/cpuid search (emulated_insns.h) kept on disk between runs of
// rewind, so that a recording or replay of a program whose files were searched before needs
// neither the search nor the disassembler (40 ms of ld.so, libc and capstone's start on the
// development VM for `rewind record /bin/true`, before this cache).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/arch/emulated_insns.h"

namespace rwd {

/// What a cached answer is for. A file with a build-id is named by it and its size, as gdb's
/// index cache names files by build-id: a trace's copy of a library then shares the original's
/// answer. A file without one is named by where it is and when it changed (device, inode,
/// size, modification time). The change time is left out on purpose: a trace's hard link to
/// the file changes it. Make one with elf_identity().
struct ElfIdentity {
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_ns = 0;  ///< st_mtim in nanoseconds
  std::string build_id;  ///< NT_GNU_BUILD_ID's bytes; empty when the file has none
};

/// The identity of a file that stat(2) gave `st` and whose NT_GNU_BUILD_ID note holds
/// `build_id` (empty: none), by ElfIdentity's rule.
ElfIdentity elf_identity(const struct stat& st, std::string build_id);

/// The sites stored for `id`, or nullopt when there is no entry, it is for another file or
/// format, or it cannot be read (a damaged entry is ignored, and replaced by the next store).
std::optional<std::vector<EmulatedSite>> load_cached_sites(const ElfIdentity& id);

/// Stores `sites` for `id` under rewind_cache_dir()/emulated-sites (engine/os/cache_files.h:
/// replace_file, so concurrent rewinds never see half an entry). Best effort: a
/// cache that cannot be written is left alone, without a message.
void store_cached_sites(const ElfIdentity& id, const std::vector<EmulatedSite>& sites);

}  // namespace rwd
