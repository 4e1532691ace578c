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

void RecordSession::stop_for_tracer(RecordTask& t, int sig, TracerStop kind) {
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
  if (!in_rewinds_pid_namespace(t.tid))
    throw UnsupportedError(
        "a tracee's stop inside a PID namespace (CLONE_NEWPID) is not "
        "supported yet");
  t.tracer_stop = sig;
  t.tracer_stop_reported = false;
  t.tracer_stop_kind = kind;
  // A restarted call's exit is not where replay leaves it (the kernel moves rip back). A
  // syscall's entry stop follows the SyscallEntry event that brings replay's copy there.
  t.tracer_stop_at_event = kind != TracerStop::Signal && kind != TracerStop::Fault
                               ? true
                               : kind == TracerStop::Signal && t.stop_follows_exit &&
                                     !is_restart_result(t.exit_result) &&
                                     get_regs(t.tid).rip == t.exit_rip;
  t.state = RunState::Stopped;
  AddressSpace& g = space(t);
  std::erase(g.ready, t.tid);
  const bool was_active = g.active == t.tid;
  if (was_active) g.active = 0;
  // Its tracer learns of it (kernel/signal.c do_notify_parent_cldstop): a wait that asks for
  // it ends, and SIGCHLD comes where a handler takes it.
  RecordTask& tracer = tasks_.at(t.tracer);
  for (auto& [tid, x] : tasks_) {
    if (x.pid != tracer.pid || x.state != RunState::InSyscall || !x.blocked) continue;
    long nr = long(x.entry.orig_rax);
    if (nr != SYS_wait4 && nr != SYS_waitid) continue;
    if (ptrace(PTRACE_INTERRUPT, x.tid, nullptr, nullptr) == 0) x.wait_interrupted = true;
  }
  if (!signal_is_ignored(tracer.tid, SIGCHLD)) {
    put_off_signal(tracer, SIGCHLD,
                   make_siginfo(SIGCHLD, CLD_TRAPPED, t.tid, task_real_uid(t.tid), sig));
    send_put_off(tracer);
  }
  if (was_active) schedule(g);
}

void RecordSession::resume_tracee(RecordTask& t, int sig, bool syscalls, pid_t tracer_pid) {
  const TracerStop kind = t.tracer_stop_kind;
  const bool fault = kind == TracerStop::Fault;
  const int stopped = t.tracer_stop;
  t.tracer_stop = 0;
  t.tracer_stop_reported = false;
  t.tracer_syscalls = syscalls;
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
    t.pending_fault = fault;
    t.tracer_passed_sig = sig;  // if its delivery is put off, its arrival is not a new stop
  }
  // From a syscall's entry the recorder goes on with the call when its turn comes (schedule,
  // as entry_reported says).
  AddressSpace& g = space(t);
  g.ready.push_back(t.tid);
  schedule(g);
}

bool RecordSession::syscall_stop_for_tracer(RecordTask& t, bool entry) {
  if (!t.tracer_syscalls || t.tracer <= 0) return false;
  const int sig = SIGTRAP | (t.tracer_sysgood ? 0x80 : 0);
  if (!entry) {
    t.blocked = false;  // it leaves its turns until its tracer resumes it
    stop_for_tracer(t, sig, TracerStop::SyscallExit);
    return true;
  }
  if (t.entry_reported) return false;  // resumed from there: on_syscall_entry goes on
  // Replay brings its copy to this entry before the tracer's next calls (which may read or
  // change its registers there).
  t.entry = get_regs(t.tid);
  mark_entry(t);
  t.entry_reported = true;
  stop_for_tracer(t, sig, TracerStop::SyscallEntry);
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
  if (!in_rewinds_pid_namespace(waiter.tid)) return std::nullopt;
  for (auto& [tid, x] : tasks_) {
    if (!x.tracer_stop || x.tracer_stop_reported || x.tracer <= 0) continue;
    const RecordTask& tracer = tasks_.at(x.tracer);
    if (tracer.pid != waiter.pid || ((options & __WNOTHREAD) && tracer.tid != waiter.tid)) continue;
    // Which children the call names (wait(2)): a pid, a process group, or any.
    bool named = false;
    if (waitid) {
      const uint64_t which = r.rdi;
      named = which == P_ALL || (which == P_PID && pid_t(r.rsi) == x.tid) ||
              (which == P_PGID && getpgid(x.tid) == (r.rsi ? pid_t(r.rsi) : getpgid(waiter.tid)));
    } else {
      const pid_t p = pid_t(r.rdi);
      named = p == -1 || (p > 0 && p == x.tid) ||
              (p == 0 && getpgid(x.tid) == getpgid(waiter.tid)) || (p < -1 && getpgid(x.tid) == -p);
    }
    if (!named) continue;
    try {
      if (waitid) {
        // siginfo_t with CLD_TRAPPED; its rusage, asked for, is left as it was (zeros here).
        if (r.rdx) {
          SigInfo si =
              make_siginfo(SIGCHLD, CLD_TRAPPED, x.tid, task_real_uid(x.tid), x.tracer_stop);
          write_memory(waiter.tid, r.rdx, si.data(), si.size());
        }
        if (r.r8) {
          struct rusage ru {};
          write_memory(waiter.tid, r.r8, &ru, sizeof ru);
        }
      } else {
        if (r.rsi) {
          int status = (x.tracer_stop << 8) | 0x7f;  // WIFSTOPPED, WSTOPSIG
          write_memory(waiter.tid, r.rsi, &status, sizeof status);
        }
        if (r.r10) {
          struct rusage ru {};
          write_memory(waiter.tid, r.r10, &ru, sizeof ru);
        }
      }
    } catch (const SystemError&) {
      return -EFAULT;
    }
    if (!(waitid && (options & WNOWAIT))) x.tracer_stop_reported = true;
    return waitid ? 0 : x.tid;
  }
  return std::nullopt;
}

void RecordSession::forget_tracer(pid_t tid) {
  for (auto& [_, task] : tasks_) {
    if (task.tracer != tid) continue;
    task.tracer = 0;
    if (task.tracer_exitkill) {
      syscall(SYS_tgkill, task.pid, task.tid, SIGKILL);
    } else if (task.tracer_stop) {
      // Detached in its stop (kernel/ptrace.c exit_ptrace): it goes on without the signal it
      // stopped for, as it does natively (tests/programs/ptrace_calls.c checks it).
      resume_tracee(task, 0, false, 0);
    }
  }
}

}  // namespace rwd
