// Moving a few x86-64 instructions to another address, as a binary patcher does when a jump
// replaces them: the copy must do what the originals did (Intel SDM vol. 2, 2.2.1.6 for
// RIP-relative addressing; Jcc/JMP for relative branches).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace rwd {

/// The instructions that start at `from`, re-encoded to run at another address.
struct DisplacedCode {
  size_t covered = 0;              ///< bytes of original code the instructions span (>= min)
  std::vector<size_t> boundaries;  ///< offsets from `from` of the 2nd, 3rd, ... instruction
  std::vector<uint8_t> code;       ///< the instructions as they run at the new address
  /// Offsets in `code` of the moved 2nd, 3rd, ... instruction (parallel to `boundaries`).
  std::vector<size_t> moved_boundaries;
};

/// Decodes whole instructions from `code` (the `n` bytes at address `from`) until they cover
/// at least `min_bytes`, and re-encodes them to run at address `to`: RIP-relative operands
/// get new displacements, and relative jumps (jmp, jcc, rel8 or rel32) become rel32 forms
/// aimed at the original targets. With `move_call`, a direct call may be the last instruction
/// moved: its copy pushes the original return address (just past the moved bytes) and jumps
/// to the target. Returns nullopt for code that cannot run elsewhere the same way:
/// undecodable bytes, a call (it would push the new address; without `move_call`, or
/// indirect, or before the last: it would return into the moved bytes), loop/jrcxz,
/// syscall, sysenter and int (the kernel sees the address), xbegin, or a target out of rel32
/// range.
std::optional<DisplacedCode> displace_instructions(const uint8_t* code, size_t n, uint64_t from,
                                                   uint64_t to, size_t min_bytes,
                                                   bool move_call = false);

/// What a single step (ptrace's PTRACE_SINGLESTEP: the trap flag) does to the instruction at
/// `pc` (in the `n` bytes at `code`). The recorder steps a signal past instructions where no
/// trampoline fits, as the kernel might have delivered it an instruction later
/// (record_signal.cpp).
enum class StepKind : uint8_t {
  /// Not stepped: undecodable bytes, syscall, sysenter, int, int3, iret, hlt, ud2, far
  /// transfers and xbegin (the kernel or the step changes what they do), and pushf, which
  /// would save the step's trap flag (Intel SDM vol. 3, 18.3.1.4).
  None,
  Plain,   ///< runs as unobserved, and where it goes on is known before (a direct call too)
  Branch,  ///< runs as unobserved; where it goes on is known only once it has run (jcc, ret)
};

/// The StepKind of the instruction at `pc`: Branch for a conditional jump, loop/jrcxz, an
/// indirect jmp or call and a near ret.
StepKind step_kind(const uint8_t* code, size_t n, uint64_t pc);

/// The targets of the direct jumps (jmp, jcc, loop and jrcxz; not calls) in the `n` bytes at
/// `code`, which lie at address `base` and hold an instruction that starts at `x`: decoded
/// from `x` on, where the boundaries are certain, and before `x` from the first of its
/// first 64 bytes whose decoding lands on `x` exactly (x86 decoding falls into step within a
/// few instructions). A jump found elsewhere, or an indirect one, is not seen; a wrong
/// decoding before `x` may add targets that no code jumps to. (The recorder keeps points
/// away from patches that code jumps into: engine/replay/point_trampoline.h.)
std::vector<uint64_t> direct_jump_targets(const uint8_t* code, size_t n, uint64_t base, uint64_t x);

/// Whether the `n` bytes at `code`, which lie at address `x`, start a short loop's path: a
/// direct jump back to `x` or before it (jmp, jcc, loop) comes within `max_insns`
/// instructions decoded from `x`, before any call, ret, int, syscall or indirect jump.
/// A static guess, decoded with capstone: the jump may not be taken.
bool in_short_loop(const uint8_t* code, size_t n, uint64_t x, size_t max_insns);

}  // namespace rwd
