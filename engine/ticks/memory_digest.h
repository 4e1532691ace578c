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

/// Bytes below and above a point's stack pointer that its stack window digest covers: the red
/// zone below (System V ABI §3.2.2), and the caller frames' spilled locals above.
inline constexpr uint64_t kStackWindowBelow = 128, kStackWindowAbove = 4096;

/// The digest_memory of the same memory (`maps` filtered as there, minus `exclude`) within
/// [rsp - kStackWindowBelow, rsp + kStackWindowAbove) only: a cheap first test of a point.
/// Where two states' full digests are equal, so are their window digests; a loop whose
/// registers are the same at every pass but whose spilled counter differs fails this test
/// instead of costing a full digest a pass (node's JSON loops: 1,661 passes).
MemoryDigest digest_stack_window(pid_t tid, const std::vector<ProcMapping>& maps,
                                 const DigestExclusions& exclude, uint64_t rsp);

/// A process's mappings at a stop and the dead part of its tasks' stacks (below each stack
/// pointer's red zone, dead_stack.h): what a timeline point's digests hash and leave out, as
/// a recorded point's digest leaves them out (RecordSession::set_point). What lies below a
/// red zone is not the program's state, and two replays to the same point may leave
/// different bytes there.
struct LiveMemory {
  std::vector<ProcMapping> maps;
  DigestExclusions dead;
};
/// LiveMemory of task `tid`'s process, whose live tasks' stack pointers are `rsps`. Throws
/// SystemError when /proc/TID/maps cannot be read.
LiveMemory live_memory(pid_t tid, const std::vector<uint64_t>& rsps);

/// One line per hashed mapping ("start-end path xxh128"), for finding which memory differs
/// when a point is not found again (set REWIND_DEBUG_DIGEST=FILE to have record and replay
/// append these reports).
std::string digest_report(pid_t tid, const DigestExclusions& exclude = {});

}  // namespace rwd
