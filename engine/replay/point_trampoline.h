// Finding a point between events without a stop at every pass of its instruction: the
// instruction is replaced by a jump to a trampoline that compares the task's registers with
// the recorded ones in the task itself and traps (int3) only when they all match. On this
// project's VMs a ptrace stop at a hardware breakpoint costs about 30 us and a debug exception
// alone about 23 us (a VM exit); the trampoline's compare costs nanoseconds.
//
// The jump (e9 rel32) covers the first instructions from the point's address onwards. Code
// may jump to the start of any of them; those starts that the jump's four displacement bytes
// cover are made int3 (0xcc) by choosing the trampoline's address so that these bytes of the
// displacement are 0xcc ("instruction punning", as E9Patch does), and the bytes after the
// jump are int3 too. A task entering the patch there traps before running anything, and goes
// on at that instruction's copy in the trampoline.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/arch/registers.h"
#include "engine/os/proc.h"

namespace rwd {

/// How the point's instruction leads to the trampoline.
enum class PatchKind : uint8_t {
  /// A jump to code that compares the registers: the task stops only when they match.
  Jump,
  /// An int3 at the point: the task stops at every pass (about 7 us here, against 30 us for
  /// a hardware breakpoint), and goes on through the trampoline's copy of the instruction
  /// without a single step. For points whose following bytes code jumps into.
  Int3,
  /// A jump to code that counts the passes (a 64-bit counter in the data page, at
  /// PointTrampoline::count_addr) and stops the task at pass number PassChecks::stop_at
  /// (count_trap), and, with PassChecks::registers, when the registers match (match_trap).
  Count,
};

/// What a PatchKind::Count trampoline checks at each pass, after counting it.
struct PassChecks {
  bool registers = false;  ///< trap at match_trap when the registers equal `want`
  uint64_t stop_at = 0;    ///< trap at count_trap at this pass (the first is 1; 0: never)
  /// With `registers`, and for Jump: the 8-byte words from the task's rsp upwards that must
  /// match too (at most 32; all within its stack), compared once the registers match. Code
  /// built without optimisation keeps its loop counters there, and its registers repeat from
  /// one pass of a loop to the next; a recorded point's (Event::stack_words) hold a count that
  /// a callee saved.
  std::vector<uint64_t> stack_words{};
  /// The moved instructions may end with a direct call (displace_instructions' move_call):
  /// the timeline's pass counts (a reverse step out of a function, or back from its call).
  bool move_call = false;
};

/// Where and what to write for one search.
struct PointTrampoline {
  PatchKind kind = PatchKind::Jump;
  uint64_t point = 0;          ///< the point's instruction address (X)
  uint64_t map_start = 0;      ///< page-aligned start of the mapping to create for the trampoline
  uint64_t map_len = 0;        ///< its length in bytes (whole pages)
  uint64_t addr = 0;           ///< where `code` goes (inside the mapping)
  std::vector<uint8_t> code;   ///< the trampoline: compares, int3, displaced code, jump back
  uint64_t data_addr = 0;      ///< where `data` goes (a page of its own in the mapping)
  std::vector<uint8_t> data;   ///< the saved rsp's slot and the expected register values
  std::vector<uint8_t> patch;  ///< what replaces the bytes at `point`: the jump, then int3s
  uint64_t match_trap = 0;     ///< rip at the trap the trampoline takes when registers match
  uint64_t count_trap = 0;     ///< Count: rip at the trap it takes at PassChecks::stop_at
  uint64_t count_addr = 0;     ///< Count: where the pass counter lies (in the data page)
  uint64_t resume = 0;  ///< where a task whose state is not the point goes on (displaced code)
  /// For each later instruction the patch covers: its address, and its copy's address in
  /// the trampoline, where a task that enters (or stands on) it goes on.
  std::vector<std::pair<uint64_t, uint64_t>> moved;
};

/// Plans a trampoline of `kind` for a point at `x` with the recorded registers `want` (Jump,
/// and Count with `checks.registers`: the 15 general-purpose registers and rsp are compared
/// in the task; the caller checks the rest and the memory digest at the trap; `checks` for
/// Count, and only its stack_words for Jump). `code` holds the bytes at `x` (at least 32 if
/// mapped). `maps` are the task's mappings and `heap_start` where its heap starts
/// (proc_brk_start; 0 for none); the trampoline goes in a gap within a 32-bit jump of `x`,
/// not within 16 MiB below the stack, nor between `heap_start` and the next mapping above
/// the heap (where brk(2) would grow it). Returns nullopt when the instructions at `x`
/// cannot be moved (displace_instructions) or no gap fits.
std::optional<PointTrampoline> plan_point_trampoline(PatchKind kind,
                                                     const std::vector<uint8_t>& code, uint64_t x,
                                                     const Registers& want,
                                                     const std::vector<ProcMapping>& maps,
                                                     uint64_t heap_start, PassChecks checks = {});

/// The mapping holding the instruction at `x` if a patch may go there: private, read-only,
/// executable code (writing into a shared file mapping would change the file, and a patch in
/// writable memory, a JIT's code, would change the memory digest); nullptr otherwise.
const ProcMapping* patchable_code_mapping(const std::vector<ProcMapping>& maps, uint64_t x);

/// Whether replay will find a point of task `tid` with registers `regs` (now) through a
/// PatchKind::Jump trampoline without a stop at every pass of some instruction: the code at
/// regs.rip is patchable, plan_point_trampoline succeeds with the task's mappings now, and
/// no direct jump found near the point (direct_jump_targets: 128 bytes before it, 384 from
/// it) aims at an instruction the patch covers, where every entry would stop at an int3.
/// The recorder asks before it names a point (a preemption, a signal). Throws SystemError
/// when the task's mappings cannot be read.
bool point_trampoline_fits(pid_t tid, const Registers& regs);

/// Whether a Jump trampoline's compares (the 15 general-purpose registers and rsp) see `a`
/// and `b` as the same state: where they do at two passes of a point, only the memory
/// digest tells those passes apart.
bool trampoline_compares_equal(const Registers& a, const Registers& b);

/// The address of `p`'s copy of the covered instruction at `addr` (a later instruction the
/// patch covers, which code may jump to), if one starts there.
std::optional<uint64_t> moved_copy(const PointTrampoline& p, uint64_t addr);

/// The smallest u >= `from` (u < 2^32) whose bytes selected by `mask` equal those of `value`;
/// nullopt if none. (The search for a jump displacement with given bytes.)
std::optional<uint64_t> next_masked_match(uint64_t from, uint32_t mask, uint32_t value);

}  // namespace rwd
