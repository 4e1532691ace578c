// Which instruction made a data write that a watchpoint trapped after (Intel SDM vol. 3,
// 17.2.4: a data breakpoint traps after the instruction that accessed the address), and what
// an instruction about to run writes (for watches kept in software).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/arch/registers.h"

namespace rwd {

/// The address of the instruction that ends at `end` and wrote to memory overlapping
/// [`addr`, `addr` + `len`), for a task stopped at `end` with registers `after` right after
/// it ran. `code` holds the bytes at [`end` - code.size(), `end`) (64 give room to
/// resynchronise). The instruction must have an explicit memory operand it writes whose
/// address, computed from `after` (64-bit base and index registers the instruction does not
/// change, rip-relative, fs/gs bases), overlaps the range. Decoding backwards is ambiguous:
/// when several starts qualify (an instruction's suffix often decodes as the same store),
/// the one kept is where every forward decoding from the earlier bytes that lands on `end`
/// puts its last instruction. Returns nullopt when no start is certain (a push, call or
/// string instruction, a jump after the write, decodings that disagree).
std::optional<uint64_t> writing_insn_before(uint64_t end, const std::vector<uint8_t>& code,
                                            const Registers& after, uint64_t addr, uint64_t len);

/// The start of the instruction that ends at `end` and may go on to it (not an unconditional
/// jump, a call, a return, a syscall, an interrupt, ud2 or hlt), where at least four forward
/// decodings of `code` (the bytes before `end`; 64 give room to resynchronise) land on `end` and
/// all agree on it, and none crosses zero fill just before it (an instruction beginning with
/// opcode 0x00 in the 16 bytes before the start: padding between sections, whose parity
/// decides where the code after it is cut). nullopt otherwise. The instruction a task ran just
/// before `end` is this one unless code jumped to `end`.
std::optional<uint64_t> insn_before(uint64_t end, const std::vector<uint8_t>& code);

/// Whether the instruction at the start of `code` (at address `at`) decodes and a single
/// step runs it as the program would without the replay's help: not a syscall, an
/// interrupt, ud2, hlt, cpuid or rdtsc (which the replay emulates), nor a repeated string
/// instruction (a step runs one iteration). Jumps, calls and returns are plain.
bool plain_to_step(const std::vector<uint8_t>& code, uint64_t at);

/// Whether the instruction at the start of `code` (at address `at`), about to run with
/// registers `before`, writes memory overlapping [`addr`, `addr` + `len`) through an explicit
/// memory operand (its address computed from `before`: base, index, rip-relative, fs/gs
/// bases). False when the bytes do not decode. For watching writes without the CPU's debug
/// registers (engine/os/soft_debug_registers.h).
bool insn_writes_to(const std::vector<uint8_t>& code, uint64_t at, const Registers& before,
                    uint64_t addr, uint64_t len);

/// A plain store: an instruction whose only effect is writing `bytes` at `addr` (then going on
/// at `next`).
struct PlainStore {
  uint64_t addr = 0;           ///< where it writes
  std::vector<uint8_t> bytes;  ///< what it writes (1, 2, 4 or 8 bytes, little-endian)
  uint64_t next = 0;           ///< the address of the instruction after it
};

/// The store the instruction at the start of `code` (at address `at`) makes when it runs with
/// registers `before`, when it is a `mov` to memory from a general register or an immediate
/// (opcodes 88, 89, C6 /0, C7 /0 of Intel SDM vol. 2B, "MOV"): it changes no register and no
/// flag, so that a tracer may make its write and move rip on instead of running it. nullopt
/// for any other instruction (lock/rep prefixes, segment registers, vector stores), for
/// bytes that do not decode, and for an address its registers do not give. For writes to a
/// page that a software watch keeps read-only but that miss every watched byte
/// (engine/replay/soft_watch_run.h).
std::optional<PlainStore> plain_store(const std::vector<uint8_t>& code, uint64_t at,
                                      const Registers& before);

/// Whether the instructions that start in [`at`, `at` + `len`) of `code` (the bytes at `at`,
/// at least through the last of them) may write memory: an explicit memory operand written
/// (or of unknown access), or an implicit write to the stack (push, call, enter: any
/// instruction that changes rsp, pop included, to stay on the safe side). True as well when
/// the bytes do not decode. For moving code aside while data watchpoints are armed: a write
/// made by a moved instruction would trap at the copy's address.
bool may_write_memory(const std::vector<uint8_t>& code, uint64_t at, size_t len);

}  // namespace rwd
