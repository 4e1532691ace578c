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

#include "engine/arch/registers.h"
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

/// Words from a point's stack pointer upwards that the point keeps as they are
/// (Event::stack_words), at most: 256 bytes. Replay's trampoline compares them in the task
/// after the registers, so a loop whose registers repeat but whose count is spilled or saved
/// on the stack stops only at the recorded pass: openssl speed's SHA-256 loops keep theirs
/// 64, 96 or 176 bytes above rsp, and replay had stopped at each of millions of passes.
inline constexpr size_t kPointStackWords = 32;

/// The 8-byte words of tid's memory from `rsp` upwards, at most kPointStackWords of them:
/// only within the mapping that holds rsp when digests hash it (private, readable and
/// writable), and only before the first word that an `exclude` range overlaps (replay may
/// find other bytes there). Empty where rsp is in no such mapping or the read fails. Equal
/// memory gives equal words, as it gives equal digests.
std::vector<uint64_t> point_stack_words(pid_t tid, const std::vector<ProcMapping>& maps,
                                        const DigestExclusions& exclude, uint64_t rsp);

/// Bytes below and above each general-purpose register's value that a point's register window
/// digest covers: an object's header before the address, its fields after it.
inline constexpr uint64_t kRegisterWindowBelow = 64, kRegisterWindowAbove = 448;
/// Bytes below and above each address found in those windows that the digest covers too
/// (an object's header and first fields), and at most how many such windows (the first found,
/// in address order).
inline constexpr uint64_t kPointedWindowBelow = 16, kPointedWindowAbove = 112;
inline constexpr size_t kPointedWindowsMax = 2048;
/// Levels of a register windows digest: the windows, the objects their words point at, and
/// the objects those point at.
inline constexpr size_t kPointerLevels = 3;

/// XXH3-128 of the same memory (`maps` filtered as digest_memory does, minus `exclude`)
/// within [v - kRegisterWindowBelow, v + kRegisterWindowAbove) of each general-purpose
/// register's value v (rsp and rip excepted) and within the stack window (windows merged, in
/// address order), then within [w - kPointedWindowBelow, w + kPointedWindowAbove) of each
/// aligned word w of those bytes that is an address in that memory (at most
/// kPointedWindowsMax a level, the first in address order), and so on, kPointerLevels levels in
/// all: the second cheap test of a point, after the stack window. Equal memory gives equal digests
/// for equal registers. An interpreter's loop whose registers and stack repeat at every pass (its
/// objects reused from a free list) keeps the pass's state one pointer away: the loop's iterator
/// and locals, which a frame points at, and a register or a C function's saved registers point at
/// the frame.
MemoryDigest digest_register_windows(pid_t tid, const std::vector<ProcMapping>& maps,
                                     const DigestExclusions& exclude, const Registers& regs);

/// A process's mappings at a stop and the dead part of its tasks' stacks (below each stack
/// pointer's red zone, dead_stack.h): what a timeline point's digests hash and leave out, as
/// a recorded point's digest leaves them out (RecordSession::set_point). What lies below a
/// red zone is not the program's state, and two replays to the same point may leave
/// different bytes there.
struct LiveMemory {
  std::vector<ProcMapping> maps;
  /// What the digests leave out: the dead stacks, and what a caller adds (the timeline: the
  /// syscall buffers' records, ReplayController::live_memory_of).
  DigestExclusions dead;
};
/// LiveMemory of task `tid`'s process, whose live tasks' stack pointers are `rsps`. Throws
/// SystemError when /proc/TID/maps cannot be read.
LiveMemory live_memory(pid_t tid, const std::vector<uint64_t>& rsps);

/// One line per hashed mapping ("start-end path xxh128", the hash of what digest_memory hashes
/// there, minus `exclude`), for finding which memory differs when a point is not found again
/// (set REWIND_DEBUG_DIGEST=FILE to have record and replay append these reports).
std::string digest_report(pid_t tid, const DigestExclusions& exclude = {});

}  // namespace rwd
