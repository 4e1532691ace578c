// Replay-side state of one task and the primitive that runs it to its next ptrace stop.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/arch/registers.h"
#include "engine/os/interruptible_wait.h"

namespace rwd {

/// Where a replayed task stands between events.
enum class TaskState : uint8_t {
  Running,      ///< stopped somewhere; the next resume uses PTRACE_SYSEMU
  ForkPending,  ///< inside a real fork/vfork/clone: run it to its syscall exit first
  Exited,       ///< the task is gone; its status is known
};

/// Per-thread kernel state that the replay set by running the program's own syscalls for
/// real (set_tid_address(2), set_robust_list(2), sigaltstack(2), clone(2)'s
/// CLONE_CHILD_CLEARTID), kept so that a copy of the process (process_copy.h) gives each
/// re-created thread the same. Addresses in the program's memory; 0: none.
struct ThreadKernelState {
  uint64_t clear_child_tid = 0;  ///< zeroed and futex-woken by the kernel when the thread ends
  uint64_t robust_list = 0, robust_len = 0;     ///< head and its size (bytes)
  uint64_t altstack_sp = 0, altstack_size = 0;  ///< alternate signal stack (0 size: none)
  int altstack_flags = 0;                       ///< its ss_flags (SS_AUTODISARM)
};

/// A task of the replayed process tree.
struct ReplayTask {
  pid_t rec_tid = 0;  ///< tid in the recording
  pid_t tid = 0;      ///< real tid in this replay
  pid_t pid = 0;      ///< real thread group id in this replay
  TaskState state = TaskState::Running;
  int resume_sig = 0;       ///< signal to deliver at the next resume
  int64_t fork_result = 0;  ///< ForkPending: the recorded result to set at syscall exit
  /// Exited: a main thread that ended while its other threads ran on; the kernel reports its
  /// status (not yet in exit_status) once they have ended.
  bool status_pending = false;
  int exit_status = 0;              ///< Exited: raw wait status
  bool ended_by_exit_call = false;  ///< Exited by its own exit or exit_group (replay_exit)
  bool at_first_exec = false;       ///< stopped at the entry of the first program's execve
  pid_t vm_parent = 0;  ///< vfork/CLONE_VM child: real tid of the parent sharing its memory
  /// A process sharing its parent's memory (CLONE_VM without CLONE_THREAD or CLONE_VFORK): the
  /// clone flags it was created with (what else it shares: CLONE_FILES, CLONE_SIGHAND...),
  /// which a copy of it is created with too; 0 for any other task.
  uint64_t vm_clone_flags = 0;
  bool at_entry = false;  ///< brought to its syscall's entry by a SyscallEntry event
  /// rax holds an emulated -ERESTART* result: without a signal to deliver at the next resume,
  /// rewind restarts the syscall as the kernel did when recording (arch signal.c rules).
  bool restart_pending = false;
  bool signal_injected = false;  ///< rewind sent it a signal to be delivered at the next resume
  bool interrupt_sent = false;   ///< a PTRACE_INTERRUPT was sent; its stop has not been seen
  uint64_t syscall_insn = 0;     ///< address of a `syscall` instruction it ran (for injection)
  /// Its librewind_preload.so syscall buffer (0: none): registered by the task, or its fork
  /// parent's (preload/README.md).
  uint64_t syscall_buffer = 0;
  uint64_t buffer_features = 0;  ///< RWD_FEATURE_* its library announced at registration
  /// The library's section rwd_defer, [defer_start, defer_end) (addresses, announced at
  /// registration: preload/preload.h): where it places, consumes and commits a buffered
  /// call's record, so no point of the replay (a checkpoint) may fall inside it.
  uint64_t defer_start = 0, defer_end = 0;
  /// Between its registration announcing RWD_FEATURE_PATCH_END and its RWD_SYS_PATCHED event:
  /// its library reads and patches libc's text (rewind_preload_abi.h), so no debugger's
  /// int3 may be there.
  bool patching_libc = false;
  /// The buffered records of the event it runs to (bytes, as the event carries them), and
  /// the positions in them (bytes, ascending) where it still has to pause (buffer_fill.h).
  std::vector<uint8_t> records;
  std::vector<uint32_t> pauses;
  /// run_to_stop returns at a pause (Stop::BufferPause) instead of going on.
  bool stop_at_pause = false;
  /// Its blocked-signal mask as the kernel has it now, read before a resume (run_once) when
  /// unknown. Unknown again after any later resume (blocked_at) and wherever rewind sets the
  /// mask (PTRACE_SETSIGMASK); kept over a debugger trap (whose forced SIGTRAP run_once undoes)
  /// where the run delivered no signal, and over a run given no signal that ran user code
  /// only, or a syscall that leaves the mask alone (mask_unchanged_by_run in
  /// replay_task.cpp). Replaying a traced syscall resumes the task two or three times, and
  /// each resume needs the mask. REWIND_CHECK_REGISTER_CACHE=1 checks the copy at each use.
  std::optional<uint64_t> blocked;
  /// resumes_so_far() when `blocked` was last known good after a run: a resume since (of
  /// any task, from anywhere) makes it unknown again.
  uint64_t blocked_at = 0;
  /// wait_stop set the mask its library left (set_pending_mask, RWD_FEATURE_LAZY_MASK) at a
  /// stop since run_once's last resume: `blocked` is that mask, which replaces whatever the
  /// run did to the kernel's copy.
  bool mask_set_at_stop = false;
  ThreadKernelState kernel;  ///< what a copy of its process must give its thread
  /// The recorded tid it had before its execve from a thread other than the main one gave it
  /// the process's (execve(2)); the trace names it so up to that Exec event. 0: none.
  pid_t exec_former_rec = 0;
};

/// What stopped a task.
struct Stop {
  /// BufferPause: the task reached a pause between its buffered records (buffer_fill.h),
  /// already handled; `status` holds the pause's position (bytes of records used).
  enum Kind : uint8_t {
    SyscallEntry,
    SyscallExit,
    Signal,
    Event,
    Exited,
    BufferPause,
    /// Stopped where it was by a PTRACE_INTERRUPT that the caller's flag asked for (run_once).
    Interrupted
  } kind = SyscallEntry;
  int sig = 0;                         ///< Signal: the signal; Event: PTRACE_EVENT_*
  int status = 0;                      ///< Exited: raw wait status
  std::array<uint8_t, 128> siginfo{};  ///< Signal: its siginfo
};

/// Resumes `t` once with `request` and waits for its next stop of interest. Signals the replay
/// did not cause (a real SIGCHLD from a replayed child) are suppressed; group-stops are
/// resumed. A syscall entry that is a pause between buffered records is returned as it is
/// (at_buffer_pause tells). After a debugger trap, a blocked SIGTRAP is blocked again (the
/// kernel unblocks it to deliver the trap). When `interrupt` is due, a task that runs on is
/// stopped where it is (interruptible_wait.h) and Stop::Interrupted returned;
/// without it, such a stop left over from an earlier run is resumed and not returned.
/// A buffered call that replay makes for real (brk: run_call_in_replay) is run where the
/// task makes it; then a run with an `interrupt` returns Stop::Interrupted there (whether
/// or not it is due), one without goes on, and a single step returns its trap.
/// Throws SystemError, DivergenceError.
Stop run_once(ReplayTask& t, int request, const InterruptWhen& interrupt = {});

/// The stop a single step reports when it ends after one instruction (a debug exception's
/// SIGTRAP with si_code TRAP_TRACE: arch/x86/kernel/traps.c), for a step whose instruction
/// rewind made itself (a call run in replay, a store made through /proc/PID/mem): the task's
/// own stop is another one.
Stop single_step_trap();

/// Resumes `t` with `request` (PTRACE_SYSEMU, PTRACE_SYSCALL, PTRACE_SINGLESTEP) until its
/// next stop of interest, as run_once, and handles a pause between buffered records
/// (take_buffer_pause): it is returned as Stop::BufferPause only with `t.stop_at_pause`.
/// For the replay's own runs; the program's runs that a driver watches go through
/// ReplaySession::run(). Throws SystemError, DivergenceError.
Stop run_to_stop(ReplayTask& t, int request);

/// Waits for `t`'s next stop without resuming it first (same filtering as run_to_stop;
/// `interrupt` as for run_once).
Stop wait_stop(ReplayTask& t, int request, const InterruptWhen& interrupt = {});

/// Task `t`'s blocked-signal mask (a bit per signal, bit 0 for signal 1): the kept copy
/// (ReplayTask::blocked) while no resume has made it stale, else read from the kernel
/// (PTRACE_GETSIGMASK) and kept. nullopt when the kernel cannot tell (the task is gone).
/// Throws Error when REWIND_CHECK_REGISTER_CACHE=1 finds the kept copy wrong.
std::optional<uint64_t> current_sigmask(ReplayTask& t);

/// How many ptrace stops of replayed tasks this process has waited for through wait_stop so
/// far (every task, every replay; stops it resumed from itself included): benchmarks print
/// it per operation (bench/long_traces). Thread-safe.
uint64_t replay_stops_total();

/// Waits for a newly created task's first stop (PTRACE_EVENT_STOP) and leaves it stopped
/// there, before it ran any code. Throws DivergenceError if it stops otherwise.
void wait_new_task(ReplayTask& t);

}  // namespace rwd
