// x86-64 instruction helpers the recorder needs (Intel SDM vol. 2).
#pragma once

#include <cstddef>
#include <cstdint>

namespace rwd {

/// Length in bytes of the instruction at `code` if it is a repeated string instruction
/// (REP/REPE/REPNE prefix with MOVS, CMPS, STOS, LODS, SCAS, INS or OUTS), else 0. Such an
/// instruction can be interrupted part-way, in a state no breakpoint can find again.
size_t rep_string_insn_length(const uint8_t* code, size_t n);

}  // namespace rwd
