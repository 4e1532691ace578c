// The counter-less half of an execution point (DESIGN.md "Ticks, preemption and asynchronous
// signals"): a 128-bit digest of a task's writable private memory. Together with the
// registers it names a point between two events without a hardware counter.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/os/proc.h"

namespace rwd {

/// XXH3-128 of memory, as two 64-bit halves (low, high).
using MemoryDigest = std::array<uint64_t, 2>;

/// [address, address + length) ranges left out of a digest: buffers that a syscall still in
/// flight in another thread may be writing while the digest is taken.
using DigestExclusions = std::vector<std::pair<uint64_t, uint64_t>>;

/// Hashes, in address order, every readable, writable, private mapping of `tid`'s address
/// space ([vvar]/[vdso] excluded), minus `exclude`. Equal states give equal digests in record
/// and replay. Cost: one pass over the writable memory (about 1 ms per 10 MB here).
/// Throws SystemError when /proc/TID/maps cannot be read.
MemoryDigest digest_memory(pid_t tid, const DigestExclusions& exclude = {});
/// The same over `maps`, tid's mappings as read_proc_maps gave them at this stop (for a
/// caller that read them already).
MemoryDigest digest_memory(pid_t tid, const std::vector<ProcMapping>& maps,
                           const DigestExclusions& exclude);

/// A digest of task `tid`'s memory for naming a point inside one debugging session (the
/// timeline's points, never compared with a recorded digest): digest_memory without the
/// task's stack below its red zone ([start of the mapping holding rsp, rsp - 128)). That
/// memory is dead (System V x86-64 psABI 3.2.2: only the 128 bytes below rsp are kept from
/// signal handlers), and two replays to the same point may leave different bytes there.
/// Throws SystemError as digest_memory.
MemoryDigest live_memory_digest(pid_t tid, uint64_t rsp);

/// One line per hashed mapping ("start-end path xxh128"), for finding which memory differs
/// when a point is not found again (set REWIND_DEBUG_DIGEST=FILE to have record and replay
/// append these reports).
std::string digest_report(pid_t tid, const DigestExclusions& exclude = {});

}  // namespace rwd
