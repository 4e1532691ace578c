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

/// Where the task goes on after the instruction at `pc` (in the `n` bytes at `code`) if that
/// is certain before it runs: the next instruction for one that does not branch, the target
/// of a direct call or jmp. nullopt for a conditional or indirect branch, a return, loop,
/// syscall, sysenter, int, hlt, ud2, or undecodable bytes. (The recorder delays a signal to
/// there: record_signal.cpp.)
std::optional<uint64_t> certain_next_insn(const uint8_t* code, size_t n, uint64_t pc);

}  // namespace rwd
