// Capturing a syscall's out-parameters at record time, following the syscall table.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <vector>

#include "engine/arch/registers.h"
#include "engine/arch/syscall_table.h"
#include "engine/ticks/memory_digest.h"
#include "engine/trace/event.h"

namespace rwd {

/// The six syscall arguments in order (rdi, rsi, rdx, r10, r8, r9), per the x86-64 ABI.
std::array<uint64_t, 6> syscall_args(const Registers& r);

/// Values that must be read at syscall entry because the kernel overwrites them
/// (the buffer sizes behind LenPtr arguments).
struct EntrySnapshot {
  std::array<uint32_t, 6> len_at_entry{};
};

/// Reads what the syscall's out-parameters need at entry.
EntrySnapshot snapshot_entry(pid_t tid, const SyscallSpec& spec, const Registers& entry);

/// The memory the kernel wrote for a finished syscall: read from the tracee at syscall exit.
/// Throws UnsupportedError for an ioctl request, fcntl or prctl option whose output is unknown.
std::vector<MemoryRegion> capture_outputs(pid_t tid, const SyscallSpec& spec,
                                          const Registers& entry, int64_t result,
                                          const EntrySnapshot& snap);

/// Memory a syscall still in flight may write (upper bounds from its capacity arguments):
/// left out of digests taken while it runs beside another task.
DigestExclusions possible_outputs(pid_t tid, const SyscallSpec& spec, const Registers& entry,
                                  const EntrySnapshot& snap);

}  // namespace rwd
