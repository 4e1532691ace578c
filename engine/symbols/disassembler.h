// x86-64 machine code as text, for the DAP disassemble request (capstone does the decoding).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rwd {

/// One decoded instruction.
struct Instruction {
  uint64_t addr = 0;           ///< runtime address
  std::vector<uint8_t> bytes;  ///< its encoding (1 to 15 bytes)
  std::string text;            ///< AT&T syntax, as gdb shows it ("mov %rsp,%rbp"); "(bad)"
  bool valid = true;           ///< false for bytes that do not decode (text "(bad)", 1 byte)
};

/// Decodes `bytes` (read at runtime address `addr`) into at most `max` instructions. Bytes
/// that do not decode become one invalid 1-byte instruction each; a truncated instruction
/// at the end is left out. Throws Error when capstone cannot be opened.
std::vector<Instruction> decode_instructions(uint64_t addr, const std::vector<uint8_t>& bytes,
                                             size_t max);

/// The start of a run of instructions that ends exactly at `addr`, found by decoding from
/// the candidates `starts` (tried in order; the first that lands on `addr` wins, each must
/// be below `addr`) over `bytes` read at runtime address `base`. Returns `addr` when none
/// lands there.
uint64_t sync_start(uint64_t base, const std::vector<uint8_t>& bytes, uint64_t addr,
                    const std::vector<uint64_t>& starts);

}  // namespace rwd
