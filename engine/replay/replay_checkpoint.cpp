// Checkpoints of a replay (DESIGN.md "Checkpoints and reverse execution"): a fork of the
// replayed process injected at its last syscall instruction, and new replays continuing
// from one (replay_session_impl.h).
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "engine/os/ptrace_ops.h"
#include "engine/replay/remote_syscall.h"
#include "engine/replay/replay_session_impl.h"

namespace rwd {

ReplayTask fork_task(ReplayTask& t) {
  if (!t.syscall_insn) throw DivergenceError("task has no syscall instruction to fork with");
  // What the next resume must do (deliver a signal, restart a syscall) belongs to the
  // program's next run, not to the injected fork: set aside, then given to both.
  ReplayTask pending = t;
  t.resume_sig = 0;
  t.restart_pending = t.signal_injected = false;
  Registers saved = get_regs(t.tid);
  RemoteSyscall rs(t, t.syscall_insn, saved);
  rs.call(SYS_fork);
  const Stop& s = rs.last_stop();
  if (s.kind != Stop::Event || s.sig != PTRACE_EVENT_FORK)
    throw DivergenceError("a checkpoint fork did not create a process");
  ReplayTask c = t;
  c.tid = c.pid = pid_t(get_event_msg(t.tid));
  wait_new_task(c);
  Stop exit_stop = run_to_stop(t, PTRACE_SYSCALL);  // the parent returns from fork
  if (exit_stop.kind != Stop::SyscallExit)
    throw DivergenceError("a checkpoint fork did not return in the replayed task");
  set_regs(t.tid, saved);
  set_regs(c.tid, saved);
  for (ReplayTask* x : {&t, &c}) {
    x->resume_sig = pending.resume_sig;
    x->restart_pending = pending.restart_pending;
    x->signal_injected = pending.signal_injected;
  }
  return c;
}

/// The forked copy of a single-task replay just after event `done`.
struct ReplaySession::Checkpoint {
  uint64_t done = 0;
  std::map<pid_t, ReplayTask> tasks;  ///< one task: the stopped copy
  uint64_t points = 0, point_stops = 0;
  TraceReader::Position position;  ///< the reader just after event `done`
  ~Checkpoint() {
    for (auto& [rec, t] : tasks) {
      if (t.state == TaskState::Exited) continue;  // a record only: no process of its own
      // A stopped tracee dies of SIGKILL at once; reap it (it is this process's child).
      kill(t.tid, SIGKILL);
      while (waitpid(t.tid, nullptr, __WALL) < 0 && errno == EINTR) {
      }
    }
  }
};

void ReplaySession::CheckpointDeleter::operator()(Checkpoint* c) const {
  delete c;
}

ReplaySession::CheckpointPtr ReplaySession::Impl::checkpoint(bool need_position) {
  std::vector<ReplayTask*> live;
  for (auto& [rec, t] : tasks_)
    if (t.state != TaskState::Exited) live.push_back(&t);
  // Fork copies only the calling thread: processes with threads, and process trees, are not
  // checkpointed (the timeline then starts over from the trace's start).
  if (live.size() != 1) return nullptr;
  ReplayTask& t = *live[0];
  if (t.state != TaskState::Running || t.at_entry || t.vm_parent || !t.syscall_insn) return nullptr;
  CheckpointPtr c(new Checkpoint);
  c->done = done_;
  c->points = points_;
  c->point_stops = point_stops_;
  if (next_ && need_position) return nullptr;  // read ahead: the reader is past `done_`
  c->position = trace_.position();
  c->tasks[t.rec_tid] = fork_task(t);
  // Threads that ended before this point but whose Exit event comes after it (their exit
  // syscall is replayed, the event that collects them not yet): kept as records, so that
  // replay from the checkpoint finds them at that event.
  for (auto& [rec, x] : tasks_)
    if (x.state == TaskState::Exited) c->tasks[rec] = x;
  return c;
}

ReplaySession::Impl::Impl(const ReplayOptions& o, const ReplaySession::Checkpoint& c) : Impl(o) {
  for (auto& [rec, ct] : c.tasks) {
    ReplayTask copy = ct;
    tasks_[rec] = ct.state == TaskState::Exited ? copy : fork_task(copy);
  }
  root_started_ = true;
  points_ = c.points;
  point_stops_ = c.point_stops;
  trace_.seek(c.position);
  done_ = c.done;
}

ReplaySession::CheckpointPtr ReplaySession::checkpoint() {
  return impl_->checkpoint(true);
}
ReplaySession::CheckpointPtr ReplaySession::diversion() {
  return impl_->checkpoint(false);
}
uint64_t ReplaySession::checkpoint_event(const Checkpoint& c) {
  return c.done;
}
std::vector<pid_t> ReplaySession::checkpoint_pids(const Checkpoint& c) {
  std::vector<pid_t> out;
  for (auto& [rec, t] : c.tasks)
    if (t.state != TaskState::Exited) out.push_back(t.tid);
  return out;
}

}  // namespace rwd
