// x86-64 general-purpose registers as ptrace exposes them (struct user_regs_struct,
// <sys/user.h>), with names for messages and comparison for divergence checks.
#pragma once

#include <sys/user.h>

#include <cstdint>
#include <optional>
#include <string>

namespace rwd {

/// The tracee's general registers, exactly PTRACE_GETREGS's layout (27 x 8 bytes).
using Registers = struct user_regs_struct;

/// Number of 64-bit fields in Registers.
constexpr size_t kRegisterCount = sizeof(Registers) / sizeof(uint64_t);

/// Name of field i of Registers ("rax", "rip", "fs_base", ...).
const char* register_name(size_t i);

/// Value of field i of Registers.
uint64_t register_value(const Registers& r, size_t i);

/// EFLAGS bits that are not program state: RF (resume flag, bit 16), which the kernel sets
/// in the saved flags of an interrupted task (Intel SDM vol. 3, 17.3.1.1). Comparisons ignore it.
constexpr uint64_t kTransientFlags = 1u << 16;

/// True when the registers are equal, ignoring kTransientFlags.
bool registers_equal(const Registers& a, const Registers& b);

/// The first register (in user_regs_struct order) whose value differs (ignoring
/// kTransientFlags), formatted as
/// "rip: recorded 0x401000, replay 0x401004"; nullopt when all are equal.
std::optional<std::string> first_register_difference(const Registers& recorded,
                                                     const Registers& replay);

/// Formats a 64-bit value as 0x-prefixed hex.
std::string hex(uint64_t v);

}  // namespace rwd
