// Hardware breakpoints and watchpoints through the x86 debug registers (Intel SDM vol. 3,
// 17.2), set per thread with PTRACE_POKEUSER. Slot 0 is rewind's own (reaching execution
// points, deferring signals); slots 1-3 serve the debugger's watchpoints.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace rwd {

/// What a debug-register slot watches (DR7 R/W bits).
enum class WatchKind : uint8_t {
  Execute = 0,    ///< before the instruction at the address runs (length 1)
  Write = 1,      ///< after an instruction wrote any watched byte
  ReadWrite = 3,  ///< after an instruction read or wrote any watched byte
};

/// Number of slots the debugger may use (1..kWatchSlots): the x86 has four, slot 0 is rewind's.
constexpr int kWatchSlots = 3;

/// The most bytes one write watchpoint covers (a struct or an array): beyond the 8 aligned
/// bytes of a CPU slot, a slot is kept in software (soft_debug_registers.h).
constexpr int kMaxWatchBytes = 4096;

/// Whether a slot on `len` bytes at `addr` cannot be one of the CPU's debug registers (they
/// cover 1, 2, 4 or 8 bytes aligned to their size: Intel SDM vol. 3, 17.2.5): such a write
/// slot (a wide watch) is kept in software even where the CPU's slots serve, its runs made
/// with the watched pages read-only (engine/replay/soft_watch_run.h).
bool wide_watch(uint64_t addr, int len);

/// Makes `tid` stop with SIGTRAP (si_code TRAP_HWBKPT) before executing the instruction at
/// `addr` (slot 0). Other slots are kept. Throws SystemError.
void set_exec_breakpoint(pid_t tid, uint64_t addr);

/// Removes the slot-0 breakpoint. Never throws.
void clear_exec_breakpoint(pid_t tid);

/// Arms slot `slot` (1..3) of `tid` to watch `len` bytes at `addr`: 1, 2, 4 or 8 aligned to
/// `len` in the CPU's slot, or a wide write watch (wide_watch(), up to kMaxWatchBytes) in a
/// software one. Throws SystemError, and Error for a ReadWrite slot that is wide or where
/// the debug registers are emulated.
void set_watch_slot(pid_t tid, int slot, uint64_t addr, int len, WatchKind kind);

/// Disarms slot `slot` of `tid`. Never throws.
void clear_watch_slot(pid_t tid, int slot);

/// Whether the CPU's debug registers serve tracees on this machine: probed once per boot
/// (machine_probes.h), in a traced child that must stop at a slot-0 breakpoint. Where they do
/// not (a PVM guest), the functions here keep the slots in software (soft_debug_registers.h):
/// runs of an armed thread then go by single steps. REWIND_SOFT_DEBUG_REGISTERS=1 makes it false
/// (for tests), =0 true.
bool hardware_debug_registers();

/// DR6 of `tid` (bits 0-3: which slot fired; bit 14 BS: a single step), cleared afterwards so
/// that the next trap reports only its own causes. Returns 0 if it cannot be read.
uint64_t take_debug_status(pid_t tid);

/// Reads debug register `reg` (0-7) of stopped task `tid` (PTRACE_PEEKUSER of u_debugreg) into
/// `value`. Returns false, errno set, where the kernel refused it.
bool peek_debug_register(pid_t tid, int reg, uint64_t& value);

/// Writes debug register `reg` of stopped task `tid` (PTRACE_POKEUSER of u_debugreg), as a
/// program's own debugger writes it. Returns 0, or -errno as the kernel answers (arch/x86/
/// kernel/ptrace.c ptrace_set_debugreg: EIO for DR4 and DR5 or an address past user space,
/// EINVAL or ENOSPC for a DR7 whose slot has a bad length, type or alignment).
long poke_debug_register(pid_t tid, int reg, uint64_t value);

/// Sets DR6 of stopped task `tid` to the single-step bit (BS, bit 14) alone, as a single
/// step's debug exception leaves it (Intel SDM vol. 3, 18.2.3): for a step whose instruction
/// rewind ran itself, so that take_debug_status tells it as a step. Errors are ignored (a
/// task that died has no registers).
void set_single_step_status(pid_t tid);

}  // namespace rwd
