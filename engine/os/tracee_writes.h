// The ptrace(2) requests by which a recorded tracer changes its stopped tracee (PTRACE_POKE*,
// PTRACE_SET{REGS,FPREGS,REGSET}): made on the real tracee by the recorder, and again on the
// replayed one by the replay of the tracer's syscall, from the same arguments and the same
// bytes in the tracer's memory (engine/record/ptrace_emulation.cpp).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace rwd {

/// The most bytes of a register set (PTRACE_GETREGSET, PTRACE_SETREGSET) taken between a
/// recorded tracer and its tracee; the XSAVE area is a few KiB.
constexpr uint64_t kMaxRegsetBytes = 64 << 10;

/// The debug register (0-7) that PTRACE_PEEKUSER or PTRACE_POKEUSER at offset `addr` of
/// struct user names (u_debugreg, <sys/user.h>), or -1 for any other offset.
int debug_register_at(uint64_t addr);

/// Whether `request` is one that apply_tracee_write makes.
bool is_tracee_write(long request);

/// Makes the tracer's `request` (with its `addr` and `data` arguments, as ptrace(2) takes
/// them) on `tracee`, a task this process traces and that is stopped: PTRACE_POKETEXT and
/// PTRACE_POKEDATA write the word `data` at `addr`; PTRACE_POKEUSER sets the general
/// register at offset `addr` of struct user_regs_struct; PTRACE_SETREGS, PTRACE_SETFPREGS
/// and PTRACE_SETREGSET (NT_PRSTATUS, NT_PRFPREG, NT_X86_XSTATE) take their struct, or the
/// iovec and the bytes it names, from `tracer`'s memory at `data`. Returns 0, or the
/// negated errno the kernel gave (EIO for an offset past the general registers, EFAULT for
/// tracer memory that cannot be read). For PTRACE_SETREGSET, `regset_len` (when given) gets
/// the length the kernel took, which it writes back into the tracer's iovec.
int64_t apply_tracee_write(pid_t tracer, pid_t tracee, long request, uint64_t addr, uint64_t data,
                           uint64_t* regset_len = nullptr);

/// The address of librewind_preload.so's switch in the memory of task `tid`, as the header of
/// its syscall buffer at `buffer` names it (rwd_buffer_header::library_switch); 0 when the
/// header cannot be read or names none (or an address no int can have).
uint64_t library_switch_at(pid_t tid, uint64_t buffer);

/// The address of librewind_preload.so's descriptor cache switch in the memory of task `tid`
/// (rwd_buffer_header::fd_cache_switch, RWD_FEATURE_FD_CACHE); 0 as library_switch_at.
uint64_t fd_cache_switch_at(pid_t tid, uint64_t buffer);

/// The address of librewind_preload.so's turns switch in the memory of task `tid`
/// (rwd_buffer_header::turns_switch, RWD_FEATURE_TURNS); 0 as library_switch_at.
uint64_t turns_switch_at(pid_t tid, uint64_t buffer);

/// The address of librewind_preload.so's list of shared files in the memory of task `tid`
/// (rwd_buffer_header::shared_files, RWD_FEATURE_SHARED_FILES); 0 as library_switch_at.
uint64_t shared_files_at(pid_t tid, uint64_t buffer);

/// Turns librewind_preload.so off in the memory of task `tid`, whose syscall buffer is at
/// `buffer`: writes 0 into the switch its buffer header names (rwd_buffer_header::
/// library_switch), after which the library makes every syscall of that memory traced.
/// The recorder does it where a tracer asks for the tracee's syscall stops
/// (turns_library_off), and replay again there. Returns false when the header names no
/// switch or it cannot be written.
bool switch_library_off_at(pid_t tid, uint64_t buffer);

/// Whether a recorded tracer's resume `request` makes every later syscall of its tracee stop
/// (PTRACE_SYSCALL, PTRACE_SYSEMU), so that the tracee's preload library goes off: in the
/// recording (ptrace_emulation.cpp) and at the same event in replay. Not PTRACE_SYSEMU_
/// SINGLESTEP, which runs one instruction or one syscall.
bool turns_library_off(long request);

/// Whether librewind_preload.so is off already in the memory of task `tid` (the switch its
/// buffer header at `buffer` names reads 0). False when the header or switch cannot be read.
bool library_off_at(pid_t tid, uint64_t buffer);

}  // namespace rwd
