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
/// replace or end tasks or return through a signal frame, nor while SIGTRAP is blocked or a program
/// has changed its action: the trap's forced SIGTRAP would reset the action, kernel/signal.c).
class RemoteSyscall {
 public:
  /// `insn` is the address of a `syscall` (0f 05) instruction in the task; `base` the
  /// registers to start from (every call begins from them, with rip/rax/args replaced).
  RemoteSyscall(ReplayTask& t, uint64_t insn, const Registers& base)
      : t_(t), insn_(insn), base_(base) {}
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
  void set_insn(uint64_t insn) { insn_ = insn; }
  /// How many calls (of all RemoteSyscall objects in this process) ran at the library's
  /// `syscall; int3`, and how many by entry and exit stops: for tests and benchmarks.
  static uint64_t calls_by_trap();
  static uint64_t calls_by_stops();

 private:
  /// call() with one stop at RWD_TRAP_SYSCALL_INSN; nullopt where that cannot be used.
  std::optional<int64_t> call_by_trap(long nr, const std::array<uint64_t, 6>& args);

  ReplayTask& t_;
  uint64_t insn_;
  Registers base_;
  Stop last_;
};

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
