// Making a stopped tracee execute system calls for rewind (to map saved files, rebuild an
// address space, run a recorded mmap for real).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "engine/arch/registers.h"
#include "engine/replay/replay_task.h"

namespace rwd {

/// Runs syscalls inside a stopped task through a `syscall` instruction at a known address.
/// Each call sets rip to the instruction, runs to the syscall's entry and exit stops
/// (PTRACE_SYSCALL) and returns rax. The caller restores the task's registers afterwards.
/// Where the task holds the preload library's `syscall; int3` (RWD_TRAP_SYSCALL_INSN), call()
/// runs the syscall there instead with one stop, the int3's (not for syscalls that create,
/// replace or end tasks or return through a signal frame, nor while SIGTRAP is blocked or a
/// program may have it ignored: the trap's forced SIGTRAP would reset the action,
/// kernel/signal.c).
/// Where it does not (before the library has started, as during the dynamic loader's mmaps),
/// call() puts an int3 right after the `syscall` at `insn` for the life of the object, and
/// runs the syscall there the same way; not for a syscall that may map, unmap or change the
/// protection of the int3's page (the int3 goes first, and that call takes the stops).
class RemoteSyscall {
 public:
  /// `insn` is the address of a `syscall` (0f 05) instruction in the task; `base` the
  /// registers to start from (every call begins from them, with rip/rax/args replaced).
  RemoteSyscall(ReplayTask& t, uint64_t insn, const Registers& base)
      : t_(t), insn_(insn), base_(base) {}
  /// Puts back the code an int3 of call() replaced.
  ~RemoteSyscall() { drop_int3(); }
  RemoteSyscall(const RemoteSyscall&) = delete;
  RemoteSyscall& operator=(const RemoteSyscall&) = delete;
  /// Executes syscall `nr` with up to six arguments; returns the raw result (-errno on error).
  /// Throws DivergenceError if the task does not stop as expected.
  int64_t call(long nr, std::array<uint64_t, 6> args = {});
  /// call() in two halves: enter() runs the task to syscall `nr`'s entry stop; finish()
  /// lets it run the syscall and returns as call() does. Between them the caller may collect
  /// what the syscall will wait on (the other threads an exit_group ends).
  void enter(long nr, std::array<uint64_t, 6> args = {});
  int64_t finish(long nr);
  /// The stop that ended the last call (an Event stop for fork-like syscalls).
  const Stop& last_stop() const { return last_; }
  void set_insn(uint64_t insn) {
    drop_int3();
    insn_ = insn;
  }
  /// How many calls (of all RemoteSyscall objects in this process) ran at a
  /// `syscall; int3`, and how many by entry and exit stops: for tests and benchmarks.
  static uint64_t calls_by_trap();
  static uint64_t calls_by_stops();

 private:
  /// call() with one stop at RWD_TRAP_SYSCALL_INSN; nullopt where that cannot be used.
  std::optional<int64_t> call_by_trap(long nr, const std::array<uint64_t, 6>& args);
  /// Where call_by_trap can run syscall `nr`: the library's stub, or `insn_` with an int3 put
  /// after it (kept until drop_int3); 0 where neither can be used.
  uint64_t trap_site(long nr, const std::array<uint64_t, 6>& args);
  /// Puts back the byte at insn_ + 2 that the int3 replaced, if the int3 is still there.
  void drop_int3() noexcept;

  ReplayTask& t_;
  uint64_t insn_;
  Registers base_;
  Stop last_;
  bool int3_ = false;      ///< an int3 of ours is at insn_ + 2
  uint8_t int3_byte_ = 0;  ///< the code byte it replaced
};

/// The address of a `syscall` instruction (bytes 0f 05) in task `tid`'s code for RemoteSyscall
/// to run at, found in its vDSO first (whose fallbacks make syscalls), else in its other
/// executable mappings; 0 when none is found. A task's own last syscall (ReplayTask::
/// syscall_insn) is unknown just after an exec until the loader makes its first one, some
/// twenty thousand instructions later: what needs a syscall in the task meanwhile (a
/// software watch's mprotect, a checkpoint's fork) uses this one.
uint64_t find_syscall_insn(pid_t tid);

/// Sets aside, for the life of the object, what task `t`'s next resume owes the program (its
/// signal to deliver, the restart of an interrupted syscall, an injected signal's mark), and
/// gives it back at the end: the resumes of syscalls rewind runs in the task (RemoteSyscall)
/// must neither deliver nor restart them (run_once would: replay_task.h).
class ProgramResumeKept {
 public:
  explicit ProgramResumeKept(ReplayTask& t)
      : t_(t), sig_(t.resume_sig), restart_(t.restart_pending), injected_(t.signal_injected) {
    t.resume_sig = 0;
    t.restart_pending = t.signal_injected = false;
  }
  ~ProgramResumeKept() {
    t_.resume_sig = sig_;
    t_.restart_pending = restart_;
    t_.signal_injected = injected_;
  }
  ProgramResumeKept(const ProgramResumeKept&) = delete;
  ProgramResumeKept& operator=(const ProgramResumeKept&) = delete;

 private:
  ReplayTask& t_;
  int sig_;
  bool restart_, injected_;
};

}  // namespace rwd
