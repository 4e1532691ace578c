// x86-64 instruction helpers the recorder needs (Intel SDM vol. 2).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace rwd {

/// How many legacy prefixes (lock, rep, segment, operand and address size) and REX bytes the
/// instruction at `code` (`n` bytes) starts with, at most 14.
size_t insn_prefix_length(const uint8_t* code, size_t n);

/// "syscall" (0f 05), "sysenter" (0f 34) or "int $0x80" (cd 80) when `code` (`n` bytes)
/// starts with that instruction, which enters the kernel; nullptr otherwise.
const char* syscall_insn_name(const uint8_t* code, size_t n);

/// Length in bytes of the instruction at `code` if it is a repeated string instruction
/// (REP/REPE/REPNE prefix with MOVS, CMPS, STOS, LODS, SCAS, INS or OUTS), else 0. Such an
/// instruction can be interrupted part-way, in a state no breakpoint can find again.
size_t rep_string_insn_length(const uint8_t* code, size_t n);

/// rep_string_insn_length of the instruction at `rip` in the memory of task `tid` (0 where it
/// cannot be read).
size_t rep_insn_at(pid_t tid, uint64_t rip);

}  // namespace rwd
