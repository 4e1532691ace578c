// Diversions: writes to memory and registers, and calls gdb makes in the program, go to a
// forked copy of the process that is thrown away when the timeline moves; the replay never
// changes (DESIGN.md "Checkpoints and reverse execution").
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/timeline/replay_controller.h"

namespace rwd {

bool ReplayController::divert_resume(bool step) {
  if (!diversion_) return false;
  const ReplayTask& live_task = task(diversion_rec_);
  Registers a = get_regs(diversion_tid_), b = get_regs(live_task.tid);
  a.orig_rax = b.orig_rax;
  if (registers_equal(a, b)) {
    end_diversion();
    return false;
  }
  bps_.sync(diversion_pid_, diversion_tid_);  // gdb's breakpoints (the call's return) in the copy
  StopInfo si;
  si.tid = diversion_rec_;
  si.event = session_->events_done();
  if (!resume(diversion_tid_, step ? PTRACE_SINGLESTEP : PTRACE_CONT, 0)) {
    end_diversion();
    throw Error("the copy of the program running the call is gone");
  }
  for (;;) {
    int st = wait_task(diversion_tid_);
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
      diversion_tid_ = 0;
      end_diversion();
      si.reason = StopReason::Signal;
      si.signo = WIFSIGNALED(st) ? WTERMSIG(st) : SIGKILL;
      immediate_stop_ = si;
      return true;
    }
    if ((st >> 16) == PTRACE_EVENT_STOP) {  // a group-stop: go on
      resume(diversion_tid_, step ? PTRACE_SINGLESTEP : PTRACE_CONT, 0);
      continue;
    }
    int sig = WSTOPSIG(st);
    Registers r = get_regs(diversion_tid_);
    if (sig == SIGTRAP && bps_.patched(diversion_pid_, r.rip - 1)) {
      r.rip -= 1;
      set_regs(diversion_tid_, r);
      si.reason = StopReason::Breakpoint;
      si.addr = r.rip;
    } else if (sig == SIGTRAP) {
      si.reason = StopReason::Step;
    } else {
      si.reason = StopReason::Signal;  // not delivered: the call stops here, as in gdb
      si.signo = sig;
    }
    immediate_stop_ = si;
    return true;
  }
}

void ReplayController::end_diversion() {
  if (diversion_pid_) bps_.forget(diversion_pid_);
  if (!diversion_tid_) diversion_.release();  // already reaped: nothing left to kill
  diversion_.reset();
  diversion_pid_ = diversion_tid_ = 0;
}

void ReplayController::begin_diversion(pid_t rec_tid) {
  if (diversion_) return;
  task(rec_tid);
  // The copy carries the breakpoint patches of the live process; reads hide them alike.
  auto c = session_->diversion();
  const ReplayTask* copy = c ? ReplaySession::checkpoint_task(*c, rec_tid) : nullptr;
  if (!copy)
    throw Error(
        "cannot change the program here: writes go to a copy of the process, and this "
        "point (a task inside a fork, or memory shared between processes) cannot be copied");
  diversion_tid_ = copy->tid;
  diversion_pid_ = copy->pid;
  diversion_rec_ = rec_tid;
  diversion_ = std::move(c);
  bps_.copy_patches(task(rec_tid).pid, diversion_pid_);
}

void ReplayController::write(pid_t rec_tid, uint64_t addr, const std::vector<uint8_t>& bytes) {
  begin_diversion(rec_tid);
  rwd::write_memory(diversion_tid_, addr, bytes.data(), bytes.size());
}

void ReplayController::set_regs_diverted(pid_t rec_tid, const Registers& regs) {
  bool entry = at_syscall_entry(rec_tid);
  begin_diversion(rec_tid);
  Registers r = regs;
  if (entry) {
    r.rip += 2;  // back to the kernel's view at a syscall entry
    r.orig_rax = get_regs(diversion_tid_).orig_rax;
  }
  set_regs(diversion_tid_, r);
}

}  // namespace rwd
