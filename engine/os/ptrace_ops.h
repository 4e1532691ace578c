// Thin, checked wrappers over ptrace(2) requests used by the recorder and the replayer.
#pragma once

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/types.h>

#include <array>
#include <cstdint>

#include "engine/arch/registers.h"

namespace rwd {

/// The general registers of one stopped task, kept on the calling thread while a
/// RegisterCacheScope is alive there: get_regs and try_get_regs answer from the copy read
/// last for that task, without a ptrace request, until anything may change them. Any resume
/// of any task (resume(), wait_for_end), any wait through this file's or interruptible_wait's
/// functions, apply_tracee_write, a failed request and forget_registers() drop the copy. A
/// set_regs keeps what a read would give back (the kernel keeps some eflags bits of its own,
/// such as IF; keep_written in ptrace_ops.cpp), or drops the copy where a segment changed. Only
/// for a thread that runs its tracees' user code one at a time (the replay, the recorder):
/// there a stopped task's registers change only after a task is resumed. A replay stop reads
/// them two or three times (the timeline's checks, the event's, the syscall's result), each
/// read a ptrace round trip (about 5-8 us on a VM). REWIND_CHECK_REGISTER_CACHE=1 compares
/// every answer from the copy, and every syscall stop kind told without asking, with the
/// kernel's and throws Error on a difference (scripts/test.sh sets it);
/// REWIND_NO_PTRACE_SHORTCUTS=1 turns the copy, syscall_stop_kind_after's and
/// syscall_stop_kind_by_result's shortcuts off (bench/traced_events).
class RegisterCacheScope {
 public:
  RegisterCacheScope();
  ~RegisterCacheScope();
  RegisterCacheScope(const RegisterCacheScope&) = delete;
  RegisterCacheScope& operator=(const RegisterCacheScope&) = delete;
};

/// How many times resume() has resumed a task, in this process, so far: a copy of a task's
/// kernel state kept across stops is good only while this has not moved (no task ran).
uint64_t resumes_so_far();

/// Whether REWIND_CHECK_REGISTER_CACHE=1 asks every copy of kernel state that rewind keeps
/// (registers here, a replayed task's signal mask: engine/replay/replay_task.h) to be checked
/// against the kernel's at each use.
bool register_cache_checked();

/// Drops the calling thread's copy of any task's registers (RegisterCacheScope): call it after
/// anything outside this file's functions that may change a tracee's general registers or end
/// it (a raw ptrace write or resume, a kill).
void forget_registers();

/// PTRACE_GETREGS (or the copy RegisterCacheScope keeps). Throws SystemError.
Registers get_regs(pid_t tid);
/// PTRACE_GETREGS into `out` (or the copy RegisterCacheScope keeps). Returns false if the task no
/// longer exists (ESRCH: it was killed while stopped, e.g. by another thread's fatal signal);
/// throws SystemError otherwise.
bool try_get_regs(pid_t tid, Registers& out);
/// PTRACE_SETREGS. Throws SystemError.
void set_regs(pid_t tid, const Registers& r);
/// PTRACE_SETREGS. Returns false if the task no longer exists (ESRCH); throws SystemError
/// otherwise.
bool try_set_regs(pid_t tid, const Registers& r);
/// PTRACE_GETSIGINFO as raw 128 bytes. Throws SystemError.
std::array<uint8_t, 128> get_siginfo(pid_t tid);
/// PTRACE_SETSIGINFO from raw 128 bytes. Throws SystemError.
void set_siginfo(pid_t tid, const std::array<uint8_t, 128>& si);
/// PTRACE_GETSIGMASK: the task's blocked signals (bit N-1 for signal N). Returns false if the
/// task no longer exists (ESRCH); throws SystemError otherwise.
bool try_get_sigmask(pid_t tid, uint64_t& out);
/// PTRACE_SETSIGMASK (SIGKILL and SIGSTOP stay unblockable, as for sigprocmask). Returns
/// false if the task no longer exists (ESRCH); throws SystemError otherwise.
bool try_set_sigmask(pid_t tid, uint64_t mask);
/// PTRACE_GETEVENTMSG (new tid after fork/clone events). Throws SystemError.
unsigned long get_event_msg(pid_t tid);
/// PTRACE_GET_SYSCALL_INFO's op: PTRACE_SYSCALL_INFO_ENTRY, _EXIT, _SECCOMP or _NONE.
int syscall_stop_kind(pid_t tid);
/// The op of a syscall stop (a SIGTRAP|0x80 wait status) that came after a resume with
/// `request`: after PTRACE_SYSEMU or PTRACE_SYSEMU_SINGLESTEP only the entry is reported (the
/// kernel skips the call and its exit stop: syscall_exit_work in kernel/entry/common.c), so no
/// request is made; otherwise syscall_stop_kind_by_result(tid), whose register read the stop's
/// handler needs anyway.
int syscall_stop_kind_after(pid_t tid, int request);
/// The op of a syscall stop, told by the registers where they can tell it: the kernel enters a
/// syscall with rax set to -ENOSYS (entry_SYSCALL_64 in arch/x86/entry/entry_64.S pushes it
/// as pt_regs->ax), so a stop with any other rax is an exit. A stop with -ENOSYS (an entry, or
/// the exit of a call the kernel does not know) asks syscall_stop_kind. Reads the registers
/// through get_regs (a RegisterCacheScope keeps them for the stop's handler).
int syscall_stop_kind_by_result(pid_t tid);
/// Resumes with `request` (PTRACE_SYSCALL, PTRACE_SYSEMU, PTRACE_CONT...) delivering `sig`.
/// Returns false if the task no longer exists (ESRCH); throws SystemError otherwise.
bool resume(pid_t tid, int request, int sig = 0);

/// Waits for the next state change of `tid` (waitpid with __WALL, again after EINTR) and
/// returns its wait status. Throws SystemError.
int wait_task(pid_t tid);

/// Waits for the end of `tid`, which a SIGKILL or the group's exit (exit_group, another
/// thread's execve) is ending: a stop it reported before that took effect is let go on
/// (PTRACE_CONT) and not returned. Returns the end's wait status; when waitpid fails
/// (already collected, or EINTR: not retried) the last status seen, 0 if none.
int wait_for_end(pid_t tid);

/// The ptrace options rewind uses (DESIGN.md "Recording"): syscall stops marked with 0x80,
/// auto-attach to children, exec events, and kill the tracees if rewind dies.
constexpr long kTraceOptions = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                               PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL |
                               PTRACE_O_TRACESECCOMP;

/// Forks a child that disables ASLR (personality ADDR_NO_RANDOMIZE), makes rdtsc trap
/// (PR_SET_TSC, PR_TSC_SIGSEGV) where the CPU can (cpu_traps_rdtsc, insn_patch.h), applies
/// `child_setup`, stops itself, and — once seized by the caller with kTraceOptions — execs `path`
/// with argv/envp. Returns its pid, stopped at the syscall-entry stop of that execve.
/// `after_seize`, when given, runs in the child once it is traced, just before the execve (the
/// seccomp filter goes there); if it returns false the child exits and spawn_traced throws Error.
/// Throws SystemError.
pid_t spawn_traced(const char* path, char* const argv[], char* const envp[], void (*child_setup)(),
                   bool (*after_seize)() = nullptr);

}  // namespace rwd
