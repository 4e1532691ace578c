// Hardware instruction breakpoints through the x86 debug registers (Intel SDM vol. 3, 17.2),
// set per thread with PTRACE_POKEUSER.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace rwd {

/// Makes `tid` stop with SIGTRAP (si_code TRAP_HWBKPT) before executing the instruction at
/// `addr`: DR0 = addr, DR7 = L0 (execute, one byte). Throws SystemError.
void set_exec_breakpoint(pid_t tid, uint64_t addr);

/// Removes the breakpoint set by set_exec_breakpoint (DR7 = 0). Never throws.
void clear_exec_breakpoint(pid_t tid);

}  // namespace rwd
