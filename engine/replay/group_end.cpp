// The end of a whole replayed process: an exit_group, or a signal whose default action ends
// it. The kernel sends SIGKILL to every other thread (exit_group(2), signal(7)); each dies
// in the ptrace stop where its last event left it. Resumed towards its Exit event instead,
// a thread could run code before the SIGKILL reached it (the recording never ran that code:
// the recorder holds a dying process's threads, record/group_exit.cpp), and reach a syscall
// instead of its end. So replay collects their ends at once, without resuming them.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "engine/arch/signal_names.h"
#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/replay/replay_session_impl.h"

namespace rwd {

void Replayer::deliver_fatal_signal(const ReplayTask& t, int sig) {
  // The thread that received the signal when recording has it pending for its next resume
  // (on_signal): `t` itself, or another thread whose Exit event comes later.
  ReplayTask* killer = nullptr;
  for (auto& [rec, x] : tasks_)
    if (x.pid == t.pid && x.state != TaskState::Exited && x.resume_sig == sig &&
        (!killer || &x == &t))
      killer = &x;
  if (!killer) return;  // delivered already: the threads were collected then
  killer->resume_sig = 0;
  resume(killer->tid, PTRACE_SYSEMU, sig);
  if (killer->tid != killer->pid) {
    // A thread's end is reported at once: it must end, not stop (a handler would mean that
    // replay diverged).
    Stop s = wait_stop(*killer, PTRACE_SYSEMU);
    if (s.kind != Stop::Exited)
      throw diverged(cur_->e, signal_name(sig) + " did not end the task that received it");
  } else if (!await_main_thread_kill(*killer)) {
    throw diverged(cur_->e, signal_name(sig) + " did not end the task that received it");
  }
  collect_group_ends(t.pid, killer->state == TaskState::Exited ? killer : nullptr);
}

bool Replayer::await_main_thread_kill(ReplayTask& main) {
  // The main thread's end is reported only after its threads' (wait(2)); a thread with a
  // pending SIGKILL shows that the kill began. Polled, so that a stop of the main thread
  // instead (replay diverged) is seen rather than waited for forever.
  for (;;) {
    int status = 0;
    forget_registers();
    if (waitpid(main.tid, &status, __WALL | WNOHANG) == main.tid) {
      if (WIFSTOPPED(status)) return false;
      main.state = TaskState::Exited;  // no threads were left
      main.exit_status = status;
      return true;
    }
    bool others = false;
    for (auto& [rec, x] : tasks_) {
      if (x.pid != main.pid || &x == &main || x.state == TaskState::Exited) continue;
      others = true;
      if (waitpid(x.tid, &status, __WALL | WNOHANG) == x.tid && !WIFSTOPPED(status)) {
        x.state = TaskState::Exited;  // killed already
        x.exit_status = status;
        return true;
      }
      ProcSignals sigs;
      try {
        sigs = read_proc_signals(x.tid);
      } catch (const Error&) {
        return true;  // gone: its end is there to collect
      }
      if (sigs.pending & signal_bit(SIGKILL)) return true;
    }
    if (!others) {  // alone: its own end comes next, or a stop if it did not die
      while (waitpid(main.tid, &status, __WALL) < 0 && errno == EINTR) {
      }
      if (WIFSTOPPED(status)) return false;
      main.state = TaskState::Exited;
      main.exit_status = status;
      return true;
    }
    usleep(100);
  }
}

void Replayer::collect_group_ends(pid_t pid, const ReplayTask* except) {
  for (bool leader : {false, true}) {
    for (auto& [rec, x] : tasks_) {
      if (&x == except || x.pid != pid || x.state == TaskState::Exited) continue;
      if ((x.tid == x.pid) != leader) continue;
      x.state = TaskState::Exited;
      x.exit_status = wait_for_end(x.tid);
      x.status_pending = false;
    }
  }
}

}  // namespace rwd
