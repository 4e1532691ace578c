// A recorded tracee's stops for its recorded tracer (ptrace(2), "Stopped states"): holding
// it where it would stop natively, telling its tracer (its wait4 and waitid, SIGCHLD),
// resuming it as its tracer asks, and letting it go when its tracer ends. The requests are
// answered in ptrace_emulation.cpp.
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>

#include "engine/arch/siginfo.h"
#include "engine/arch/signal_names.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"
#include "engine/record/record_session.h"
#include "engine/record/signal_disposition.h"

namespace rwd {

namespace {

/// SIGCHLD's si_code and si_status for a child that ended with wait status `status`
/// (kernel/signal.c do_notify_parent): CLD_EXITED with its exit code, or CLD_KILLED or
/// CLD_DUMPED with its signal.
std::pair<int, int> end_code(int status) {
  if (WIFEXITED(status)) return {CLD_EXITED, WEXITSTATUS(status)};
  return {WCOREDUMP(status) ? CLD_DUMPED : CLD_KILLED, WTERMSIG(status)};
}

/// Whether the wait4 or waitid (`waitid`) whose entry registers are `r`, made by a waiter of
/// process group `own_group`, names the child `tid` of process group `group` (-1: not known):
/// a pid, a process group, or any (wait(2)). Every number is as the waiter knows it (its PID
/// namespace's: WaitView).
bool wait_names(const Registers& r, bool waitid, pid_t own_group, pid_t tid, pid_t group) {
  if (waitid) {
    const uint64_t which = r.rdi;
    return which == P_ALL || (which == P_PID && pid_t(r.rsi) == tid) ||
           (which == P_PGID && group == (r.rsi ? pid_t(r.rsi) : own_group));
  }
  const pid_t p = pid_t(r.rdi);
  return p == -1 || (p > 0 && p == tid) || (p == 0 && group == own_group) ||
         (p < -1 && group == -p);
}

/// The numbers a waiting thread knows tasks and process groups by: rewind's in rewind's PID
/// namespace, its own namespace's elsewhere (pid_seen_by). Each is read from /proc when first
/// asked for: most waits name no tracee and ask nothing.
class WaitView {
 public:
  explicit WaitView(pid_t waiter) : waiter_(waiter) {}
  /// `tid` (a task, or a process group's leader) as the waiter knows it; -1 stays -1.
  pid_t seen(pid_t tid) const {
    if (same_ < 0) same_ = in_rewinds_pid_namespace(waiter_) ? 1 : 0;
    return same_ || tid <= 0 ? tid : pid_seen_by(waiter_, tid);
  }
  /// The process group of live task `tid` as the waiter knows it (-1 when it is gone).
  pid_t group_of(pid_t tid) const { return seen(getpgid(tid)); }
  /// The waiter's own process group, as it knows it.
  pid_t own_group() const {
    if (!own_group_known_) own_group_ = group_of(waiter_), own_group_known_ = true;
    return own_group_;
  }

 private:
  pid_t waiter_;
  mutable int same_ = -1;  ///< in rewind's PID namespace: 1, 0; -1 not read yet
  mutable pid_t own_group_ = 0;
  mutable bool own_group_known_ = false;
};

}  // namespace

void RecordSession::leave_turns(RecordTask& t) {
  t.state = RunState::Stopped;
  AddressSpace& g = space(t);
  std::erase(g.turns->ready, t.tid);
  if (g.turns->active != t.tid) return;
  g.turns->active = 0;
  schedule(g);
}

void RecordSession::stop_for_tracer(RecordTask& t, int sig, TracerStop kind, int event) {
  const bool at_exec = kind == TracerStop::Exec;
  const std::string at = at_exec ? "the SIGTRAP after its execve" : "signal " + signal_name(sig);
  if (t.tracer == kTracerOutside)
    throw UnsupportedError("task " + std::to_string(t.tid) +
                           " would stop for its tracer (PTRACE_TRACEME) at " + at +
                           ": its tracer is a process outside the recording");
  if (!tasks_.count(t.tracer))
    throw UnsupportedError("task " + std::to_string(t.tid) + " would stop for its tracer at " + at +
                           ", whose thread took another id (an execve from a thread) since: not "
                           "supported yet");
  // Where replay's copy of it stands while it is stopped: where its last event left it after
  // an exec or a syscall (not a restarted one: the kernel moved rip back), at the
  // SyscallEntry event that brings it to a syscall's entry, at the Signal event of the stop
  // signal that stopped it; an interrupt stop is where its group-stop was.
  bool at_event =
      kind == TracerStop::Exec || kind == TracerStop::SyscallEntry ||
      kind == TracerStop::SyscallExit || kind == TracerStop::Seccomp ||
      (kind == TracerStop::Interrupt && t.tracer_stop_at_event) ||
      ((kind == TracerStop::Group || kind == TracerStop::Step) && t.stop_follows_signal_event) ||
      (kind == TracerStop::Signal && t.stop_follows_exit && !is_restart_result(t.exit_result) &&
       get_regs(t.tid).rip == t.exit_rip);
  if (!at_event &&
      (kind == TracerStop::Signal || kind == TracerStop::Fault || kind == TracerStop::Step)) {
    // Stopped between its events: an event of its own here, which replay brings its copy to
    // (as a preemption's), so that its tracer's writes to it are made again where they were.
    // Not inside the syscall buffer's code, where replay runs other instructions (a signal
    // that a buffered sigprocmask unblocked arrives as the call returns, on the untraced
    // page): stepped out first, as if the signal had come a few instructions later.
    if (kind == TracerStop::Signal && t.buffer.must_not_stop_at(get_regs(t.tid).rip)) {
      const SigInfo si = get_siginfo(t.tid);  // (the steps' traps replace it)
      step_out_of_buffer_code(t);
      // Blocked by the call the steps ran: no stop for its tracer until it is unblocked.
      if (put_off_if_now_blocked(t, sig, si)) return resume_syscall(t, 0);
    }
    if (!write_sched_event(t, get_regs(t.tid))) return;  // killed: its exit comes next
    at_event = true;
  }
  t.tracer_stop = sig;
  t.tracer_stop_reported = false;
  t.tracer_stop_kind = kind;
  t.tracer_event = event;
  t.tracer_listening = false;
  t.tracer_stop_at_event = at_event;
  notify_tracer(t, CLD_TRAPPED, sig & 0x7f);
  leave_turns(t);
}

void RecordSession::notify_tracer(const RecordTask& tracee, int code, int status) {
  auto it = tasks_.find(tracee.tracer);
  if (it == tasks_.end()) return;
  RecordTask& tracer = it->second;
  for (auto& [_, x] : tasks_) {
    if (x.pid != tracer.pid || x.state != RunState::InSyscall || !x.blocked) continue;
    long nr = long(x.entry.orig_rax);
    if (nr != SYS_wait4 && nr != SYS_waitid) continue;
    if (ptrace(PTRACE_INTERRUPT, x.tid, nullptr, nullptr) == 0) x.wait_interrupted = true;
  }
  if (!signal_is_ignored(tracer.tid, SIGCHLD)) {
    put_off_signal(
        tracer, SIGCHLD,
        make_siginfo(SIGCHLD, code, tracee.tid_for_tracer, task_real_uid(tracee.tid), status));
    send_put_off(tracer);
  }
}

void RecordSession::report_exit_to_tracer(const RecordTask& t, int status) {
  auto tracer = tasks_.find(t.tracer);
  if (t.tracer <= 0 || tracer == tasks_.end()) return;
  // The kernel tells a process of its children's ends (their main threads'); its tracer, of
  // every tracee's (ptrace(2), "Death under ptrace").
  auto parent = tasks_.find(t.parent_tid);
  const bool kernel_tells =
      t.tid == t.pid && parent != tasks_.end() && parent->second.pid == tracer->second.pid;
  if (kernel_tells) return;
  tracee_exits_.push_back({t.tracer, t.tid, t.tid_for_tracer, status});
  const auto [code, info_status] = end_code(status);
  notify_tracer(t, code, info_status);
}

bool RecordSession::exit_stop_for_tracer(RecordTask& t) {
  if (t.tracer <= 0 || !(t.tracer_options & PTRACE_O_TRACEEXIT) || t.exit_reported) return false;
  Registers r = get_regs(t.tid);
  if (long(r.orig_rax) != SYS_exit && long(r.orig_rax) != SYS_exit_group) return false;
  t.exit_reported = true;
  t.tracer_event_msg = (r.rdi & 0xff) << 8;  // the wait status it ends with (wait(2))
  stop_for_tracer(t, SIGTRAP, TracerStop::Exit, PTRACE_EVENT_EXIT);
  return true;
}

bool RecordSession::exec_stops_for_tracer(RecordTask& t) {
  if (t.tracer == 0) return false;
  const bool syscalls = t.tracer_syscalls;
  if (t.tracer_options & PTRACE_O_TRACEEXEC) {
    // Its former tid in the tracer's PID namespace (fs/exec.c, old_vpid).
    t.tracer_event_msg = uint64_t(t.exec_former_tid ? t.exec_former_seen : t.tid_for_tracer);
    if (syscalls) t.next_tracer_stop = TracerStop::SyscallExit;
    stop_for_tracer(t, SIGTRAP, TracerStop::Exec, PTRACE_EVENT_EXEC);
    return true;
  }
  if (t.tracer_seized) return syscall_stop_for_tracer(t, false);  // no SIGTRAP for it
  if (syscalls) {
    t.next_tracer_stop = TracerStop::Exec;
    return syscall_stop_for_tracer(t, false);
  }
  stop_for_tracer(t, SIGTRAP, TracerStop::Exec);
  return true;
}

void RecordSession::resume_tracee(RecordTask& t, int sig, bool syscalls, pid_t tracer_pid) {
  const TracerStop kind = t.tracer_stop_kind;
  const bool fault = kind == TracerStop::Fault;
  const int stopped = t.tracer_stop;
  t.unrun_since_event = t.tracer_stop_at_event || kind == TracerStop::NewTask;
  t.tracer_stop = 0;
  t.tracer_stop_reported = false;
  t.tracer_syscalls = syscalls;
  // A PTRACE_EVENT stop and a group-stop take no signal (ptrace(2), "Restarting ptrace
  // commands"); resumed from a group-stop, it runs while its process stays stopped.
  if (t.tracer_event || kind == TracerStop::Group) sig = 0;
  if (kind == TracerStop::Group || kind == TracerStop::Interrupt) t.group_stop = 0;
  if (kind == TracerStop::NewTask) t.resume_inside_syscall = true;
  if (kind == TracerStop::Seccomp && std::exchange(t.seccomp_stop_inside, false)) {
    // The recorder took the call before this stop: it goes on in the kernel. A call that may
    // block gave up its turn at its entry, and goes on without one.
    if (t.blocked) {
      t.tracer_event = 0;
      t.state = RunState::InSyscall;
      return resume_syscall(t);
    }
    t.resume_inside_syscall = true;
  }
  const int event = std::exchange(t.tracer_event, 0);
  // The child has ended or exec'd already (release_vfork_parent): the vfork is done.
  if (event == PTRACE_EVENT_VFORK && vfork_done_stop(t, pid_t(t.tracer_event_msg))) return;
  if (sig && (kind == TracerStop::SyscallEntry || kind == TracerStop::SyscallExit)) {
    // At a syscall stop the kernel sends it as a new signal (kernel/ptrace.c
    // ptrace_report_syscall: send_sig with SEND_SIG_PRIV), which stops the tracee again.
    put_off_signal(t, sig, make_siginfo(sig, SI_KERNEL, 0, 0, 0));
    send_put_off(t);
  } else if (sig && kind == TracerStop::Exec) {
    // No signal-delivery stop to deliver it from: sent, and delivered when it arrives.
    put_off_signal(t, sig, make_siginfo(sig, SI_USER, tracer_pid, task_real_uid(t.tid), 0));
    send_put_off(t);
    t.tracer_passed_sig = sig;
  } else if (sig) {
    // From its signal-delivery stop: another signal than the one it stopped for comes with
    // the siginfo the kernel gives it (kernel/signal.c ptrace_signal: SI_USER, the tracer's).
    if (sig != stopped)
      set_siginfo(t.tid, make_siginfo(sig, SI_USER, tracer_pid, task_real_uid(t.tid), 0));
    t.pending_sig = sig;
    // The fault's own signal is delivered as the fault; another one replaces it (the
    // instruction did not run), as a signal from outside, at the event where it stopped.
    t.pending_fault = fault && sig == stopped;
    t.tracer_passed_sig = sig;  // if its delivery is put off, its arrival is not a new stop
  }
  // From a syscall's entry the recorder goes on with the call when its turn comes (schedule,
  // as entry_reported says).
  AddressSpace& g = space(t);
  g.turns->ready.push_back(t.tid);
  schedule(g);
}

void RecordSession::step_for_tracer(RecordTask& t) {
  t.state = RunState::UserRunning;
  // An instruction the recorder emulates (rdtsc under PR_SET_TSC, a cpuid's stand-in) would
  // fault before it ran: emulated here, its event is the step.
  if (Registers regs = get_regs(t.tid); emulate_insn(t, regs)) {
    t.tracer_step_emulated = true;
    return stop_for_tracer(t, SIGTRAP, TracerStop::Step);
  }
  const int st = step_insn(t);
  // The trap flag's SIGTRAP once the instruction ran (si_code TRAP_TRACE, <asm-generic/
  // siginfo.h>); an int3 it ran traps with SI_KERNEL, a stop of its own (on_signal). A
  // watchpoint of its tracer's that the instruction hit shows in DR6 beside the step.
  if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP && (st >> 16) == 0 &&
      siginfo_code(get_siginfo(t.tid)) == TRAP_TRACE) {
    note_tracer_debug_status(t);
    return stop_for_tracer(t, SIGTRAP, TracerStop::Step);
  }
  handle_stop(t, st);
}

bool RecordSession::vfork_done_stop(RecordTask& t, pid_t child) {
  if (t.tracer <= 0 || !(t.tracer_options & PTRACE_O_TRACEVFORKDONE)) return false;
  // kernel/fork.c kernel_clone: once the child released its parent's memory, the parent
  // stops with PTRACE_EVENT_VFORK_DONE, the child's pid as the event's message. Here the
  // parent holds still until then (release_vfork_parent), so the stop comes at once.
  t.tracer_event_msg = uint64_t(child);
  stop_for_tracer(t, SIGTRAP, TracerStop::NewTask, PTRACE_EVENT_VFORK_DONE);
  return true;
}

bool RecordSession::syscall_stop_for_tracer(RecordTask& t, bool entry) {
  if (!entry && std::exchange(t.sysemu_skipped, false)) return false;  // emulated: no exit stop
  if (!t.tracer_syscalls || t.tracer <= 0) return false;
  const int sig = SIGTRAP | (t.tracer_options & PTRACE_O_TRACESYSGOOD ? 0x80 : 0);
  if (!entry) {
    t.blocked = false;  // it leaves its turns until its tracer resumes it
    stop_for_tracer(t, sig, TracerStop::SyscallExit);
    return true;
  }
  // Resumed from there, or from the PTRACE_EVENT_EXIT stop after it: on_syscall_entry goes on.
  if (t.entry_reported || t.exit_reported) return false;
  // Replay brings its copy to this entry before the tracer's next calls (which may read or
  // change its registers there).
  t.entry = get_regs(t.tid);
  if (library_call_at_entry(t)) return false;  // on_syscall_entry answers it
  report_entry(t);
  t.sysemu_entry = std::exchange(t.tracer_sysemu, false);
  stop_for_tracer(t, sig, TracerStop::SyscallEntry);
  return true;
}

void RecordSession::report_entry(RecordTask& t) {
  if (t.entry_reported) return;
  take_buffered(t);  // the calls its buffer made before this one come first
  mark_entry(t);
  t.entry_reported = true;
}

bool RecordSession::seccomp_stop_for_tracer(RecordTask& t) {
  if (!t.seccomp_stop_due) return false;
  const uint16_t data = *std::exchange(t.seccomp_stop_due, std::nullopt);
  if (t.tracer <= 0 || !(t.tracer_options & PTRACE_O_TRACESECCOMP)) return false;
  // The tracer may change the call there (a changed number or argument, or -1 to skip it:
  // on_syscall_entry takes the registers as the tracer left them).
  t.entry = get_regs(t.tid);
  report_entry(t);            // once: after a syscall-enter-stop it stands there already
  t.tracer_event_msg = data;  // PTRACE_GETEVENTMSG: SECCOMP_RET_DATA (ptrace(2))
  stop_for_tracer(t, SIGTRAP, TracerStop::Seccomp, PTRACE_EVENT_SECCOMP);
  return true;
}

std::optional<int64_t> RecordSession::tracer_wait_answer(RecordTask& waiter) {
  const Registers& r = waiter.entry;
  const bool waitid = long(r.orig_rax) == SYS_waitid;
  const uint64_t options = waitid ? r.r10 : r.rdx;
  // What each call accepts (kernel/exit.c: kernel_waitid, kernel_wait4); anything else is the
  // kernel's to refuse.
  constexpr uint64_t kWait4Options =
      WNOHANG | WUNTRACED | WCONTINUED | __WNOTHREAD | __WCLONE | __WALL;
  constexpr uint64_t kWaitidOptions =
      WNOHANG | WNOWAIT | WEXITED | WSTOPPED | WCONTINUED | __WNOTHREAD | __WCLONE | __WALL;
  if (options & ~(waitid ? kWaitidOptions : kWait4Options)) return std::nullopt;
  if (waitid && !(options & (WEXITED | WSTOPPED | WCONTINUED))) return std::nullopt;
  const WaitView view(waiter.tid);
  auto named = [&](pid_t seen_tid, pid_t tid, bool ended) {
    return wait_names(r, waitid, view.own_group(), seen_tid, ended ? -1 : view.group_of(tid));
  };
  auto traced_by_waiter = [&](pid_t tracer_tid) {
    auto tracer = tasks_.find(tracer_tid);
    return tracer != tasks_.end() && tracer->second.pid == waiter.pid &&
           (!(options & __WNOTHREAD) || tracer_tid == waiter.tid);
  };
  // Writes the answer about tracee `tid` (`seen` to the waiter): wait4's status word, or
  // waitid's siginfo (SIGCHLD with `code` and si_status `info_status`, kernel/exit.c); the
  // rusage asked for is left zero.
  auto answer = [&](pid_t tid, pid_t seen, int wait_status, int code, int info_status) -> int64_t {
    try {
      if (waitid && r.rdx) {
        SigInfo si = make_siginfo(SIGCHLD, code, seen, task_real_uid(tid), info_status);
        write_memory(waiter.tid, r.rdx, si.data(), si.size());
      } else if (!waitid && r.rsi) {
        write_memory(waiter.tid, r.rsi, &wait_status, sizeof wait_status);
      }
      if (uint64_t ru_at = waitid ? r.r8 : r.r10) {
        struct rusage ru {};
        write_memory(waiter.tid, ru_at, &ru, sizeof ru);
      }
    } catch (const SystemError&) {
      return -EFAULT;
    }
    return waitid ? 0 : seen;
  };
  const bool keep = waitid && (options & WNOWAIT);
  for (auto& [tid, x] : tasks_) {
    if (!x.tracer_stop || x.tracer_stop_reported || x.tracer <= 0) continue;
    if (!traced_by_waiter(x.tracer) || !named(x.tid_for_tracer, x.tid, false)) continue;
    // WIFSTOPPED, WSTOPSIG, and the PTRACE_EVENT_* above them (ptrace(2)).
    const int exit_code = x.tracer_stop | (x.tracer_event << 8);
    int64_t result =
        answer(x.tid, x.tid_for_tracer, (exit_code << 8) | 0x7f, CLD_TRAPPED, exit_code);
    if (result >= 0 && !keep) x.tracer_stop_reported = true;
    return result;
  }
  if (!waitid || (options & WEXITED)) {
    for (auto it = tracee_exits_.begin(); it != tracee_exits_.end(); ++it) {
      if (!traced_by_waiter(it->tracer) || !named(it->seen, it->tid, true)) continue;
      const auto [code, info_status] = end_code(it->status);
      int64_t result = answer(it->tid, it->seen, it->status, code, info_status);
      if (result >= 0 && !keep) tracee_exits_.erase(it);
      return result;
    }
  }
  return std::nullopt;
}

bool RecordSession::tracer_wait_must_block(const RecordTask& waiter) {
  const Registers& r = waiter.entry;
  const bool waitid = long(r.orig_rax) == SYS_waitid;
  if ((waitid ? r.r10 : r.rdx) & WNOHANG) return false;
  const WaitView view(waiter.tid);
  bool names_tracee = false;
  for (const auto& [tid, x] : tasks_) {
    auto tracer = tasks_.find(x.tracer);
    if (x.tracer > 0 && tracer != tasks_.end() && tracer->second.pid == waiter.pid &&
        wait_names(r, waitid, view.own_group(), x.tid_for_tracer, view.group_of(tid)))
      names_tracee = true;
  }
  if (!names_tracee) return false;
  for (pid_t c : process_children(waiter.pid))
    if (wait_names(r, waitid, view.own_group(), view.seen(c), view.group_of(c))) return false;
  return true;
}

void RecordSession::forget_tracer(pid_t tid) {
  std::erase_if(tracee_exits_, [&](const TraceeExit& e) { return e.tracer == tid; });
  for (auto& [_, task] : tasks_) {
    if (task.tracer != tid) continue;
    const bool exitkill = task.tracer_options & PTRACE_O_EXITKILL;
    untrace(task);
    if (exitkill) {
      syscall(SYS_tgkill, task.pid, task.tid, SIGKILL);
      forget_registers();
    } else if (task.tracer_stop && hold_group_stop(task)) {
      // Its process is still stopped: so is it, untraced (kernel/ptrace.c __ptrace_detach).
    } else if (task.tracer_stop) {
      // Detached in its stop (kernel/ptrace.c exit_ptrace): it goes on without the signal it
      // stopped for, as it does natively (tests/programs/ptrace_calls.c checks it).
      resume_tracee(task, 0, false, 0);
    }
  }
}

}  // namespace rwd
