// Group-stops of recorded processes (signal(7): SIGSTOP, and SIGTSTP, SIGTTIN, SIGTTOU by
// their default action, stop every thread of a process until SIGCONT). rewind is the real
// tracer of every task, and a tracer that resumes a group-stopped task makes it run
// (ptrace(2), "Group-stop"): so a task that stops is held, out of its address space's turns,
// with a real PTRACE_LISTEN, which the kernel ends with PTRACE_EVENT_STOP when SIGCONT comes.
// Its process's parent sees the stop and the continuation as it does natively (wait(2)
// WUNTRACED, WCONTINUED). A task with an emulated tracer stops for that tracer instead
// (TracerStop::Group), which may resume it, or listen for its SIGCONT (ptrace_emulation.cpp).
// Nothing here writes an event: the stop changes neither memory nor registers, and the task's
// next events come when it runs again.
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <cerrno>
#include <string>

#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/record/record_session.h"

namespace rwd {

void RecordSession::on_group_stop(RecordTask& t, int sig) {
  t.interrupt_requested = false;  // the stop ended the time slice as well
  t.group_stop = sig;
  if (t.tracer != 0) {
    // Its tracer is told (ptrace(2): a seized tracee's group-stop is a PTRACE_EVENT_STOP).
    return stop_for_tracer(t, sig, TracerStop::Group, t.tracer_seized ? PTRACE_EVENT_STOP : 0);
  }
  if (!start_listening(t))
    throw SystemError("ptrace(PTRACE_LISTEN) of task " + std::to_string(t.tid), errno);
  leave_turns(t);
}

bool RecordSession::start_listening(RecordTask& t) {
  forget_registers();  // a resume of sorts: SIGCONT lets it go on
  if (ptrace(PTRACE_LISTEN, t.tid, nullptr, nullptr) != 0) return false;
  t.listening = true;
  t.tracer_stop = 0;
  t.tracer_stop_reported = false;
  t.state = RunState::Stopped;
  return true;
}

void RecordSession::on_listen_end(RecordTask& t, int sig) {
  t.listening = false;
  if (sig == SIGTRAP) t.group_stop = 0;  // SIGCONT ended it (kernel/signal.c do_jobctl_trap)
  if (t.tracer != 0 && t.tracer_listening) {
    // Its tracer's PTRACE_LISTEN ends: it stops for its tracer again.
    return stop_for_tracer(t, sig, TracerStop::Interrupt, PTRACE_EVENT_STOP);
  }
  if (t.group_stop && hold_group_stop(t)) return;  // still stopped: listening again
  AddressSpace& g = space(t);
  t.state = RunState::Stopped;
  g.turns->ready.push_back(t.tid);
  schedule(g);
}

void RecordSession::end_listen(RecordTask& t) {
  if (!t.listening) return;
  if (ptrace(PTRACE_INTERRUPT, t.tid, nullptr, nullptr) != 0)
    throw SystemError("ptrace(PTRACE_INTERRUPT) of task " + std::to_string(t.tid), errno);
  const int status = wait_task(t.tid);
  t.listening = false;
  if (!WIFSTOPPED(status) || (status >> 16) != PTRACE_EVENT_STOP)
    throw UnsupportedError("task " + std::to_string(t.tid) +
                           " ended while its tracer attached to it: not supported yet");
  if (WSTOPSIG(status) == SIGTRAP) t.group_stop = 0;
}

void RecordSession::take_pending_stop(RecordTask& t) {
  int status = 0;
  pid_t r;
  forget_registers();
  do {
    r = waitpid(t.tid, &status, WNOHANG | __WALL);
  } while (r < 0 && errno == EINTR);
  if (r != t.tid) return;
  ++ptrace_stops_;
  handle_stop(t, status);
}

bool RecordSession::group_stop_over(const RecordTask& t) {
  if (!t.group_stop) return true;
  ProcSignals s = read_proc_signals(t.tid);
  const uint64_t cont = 1ull << (SIGCONT - 1);
  return ((s.pending | s.shared_pending) & cont) != 0;
}

bool RecordSession::hold_group_stop(RecordTask& t) {
  if (t.tracer_stop && t.tracer_stop_kind != TracerStop::Group &&
      t.tracer_stop_kind != TracerStop::Interrupt)
    return false;  // not stopped where PTRACE_LISTEN applies
  if (group_stop_over(t)) {
    t.group_stop = 0;
    return false;
  }
  return start_listening(t);
}

void RecordSession::untrace(RecordTask& t) {
  t.tracer = 0;
  t.tid_for_tracer = 0;
  t.tracer_options = 0;
  t.tracer_seized = t.tracer_listening = t.tracer_syscalls = t.tracer_interrupt_pending = false;
  t.tracer_sysemu = false;
  t.next_tracer_stop.reset();
}

}  // namespace rwd
