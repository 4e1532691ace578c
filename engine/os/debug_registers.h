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

/// Makes `tid` stop with SIGTRAP (si_code TRAP_HWBKPT) before executing the instruction at
/// `addr` (slot 0). Other slots are kept. Throws SystemError.
void set_exec_breakpoint(pid_t tid, uint64_t addr);

/// Removes the slot-0 breakpoint. Never throws.
void clear_exec_breakpoint(pid_t tid);

/// Arms slot `slot` (1..3) of `tid` to watch `len` bytes (1, 2, 4 or 8, aligned to `len`) at
/// `addr`. Throws SystemError (EINVAL for a misaligned range, as the kernel checks it), and
/// Error for a ReadWrite slot where the debug registers are emulated.
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

}  // namespace rwd
