#include "replay_task.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <utility>

#include "engine/arch/siginfo.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/debug_registers.h"
#include "engine/os/interruptible_wait.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/soft_debug_registers.h"
#include "engine/replay/buffer_fill.h"
#include "engine/replay/soft_watch_run.h"
#include "engine/replay/watched_pages.h"

namespace rwd {

namespace {
void restart_syscall_now(pid_t tid) {
  Registers r;
  // A task killed while it waited (another thread's fatal signal ended the process) has no
  // registers any more; the resume that follows fails too, and its exit is collected.
  if (!try_get_regs(tid, r)) return;
  if (int64_t(r.orig_rax) < 0 || !is_restart_result(int64_t(r.rax))) return;
  r.rax = int64_t(r.rax) == -516 ? uint64_t(SYS_restart_syscall) : r.orig_rax;
  r.rip -= 2;  // back onto the syscall instruction
  try_set_regs(tid, r);
}

/// Whether stop `s` after a resume with `request` is a trap the debugger caused: a single
/// step, a hardware watchpoint, or an int3 (si_code SI_KERNEL; the program's own int3 looks
/// the same). Not a SIGTRAP the program sent (tkill: SI_TKILL).
bool debugger_trap(const Stop& s, int request) {
  if (s.kind != Stop::Signal || s.sig != SIGTRAP) return false;
  if (request == PTRACE_SINGLESTEP || request == PTRACE_SYSEMU_SINGLESTEP) return true;
  int code = 0;
  std::memcpy(&code, s.siginfo.data() + 8, sizeof code);  // siginfo_t.si_code
  return code == TRAP_HWBKPT || code == TRAP_TRACE || code == SI_KERNEL;
}
}  // namespace

Stop single_step_trap() {
  Stop s;
  s.kind = Stop::Signal;
  s.sig = SIGTRAP;
  int signo = SIGTRAP, code = TRAP_TRACE;
  std::memcpy(s.siginfo.data(), &signo, sizeof signo);    // siginfo_t.si_signo
  std::memcpy(s.siginfo.data() + 8, &code, sizeof code);  // siginfo_t.si_code
  return s;
}

// The kernel delivers a debug trap as a forced SIGTRAP (force_sig_info_to_task in
// kernel/signal.c): when the task blocks SIGTRAP, the trap unblocks it. The recording made
// no such trap there, so the program would see another mask (a posix_spawn child copies it
// and skips resetting SIGTRAP's action: a divergence after a reverse step through
// posix_spawn). The mask read before the resume is put back after such a trap. (The kernel
// also resets a blocked SIGTRAP's handler to SIG_DFL; that is not undone.)
namespace {
/// Whether a run of `t` by `request`, given no signal, that ended at stop `s` left its signal
/// mask as it was (ReplayTask::blocked). Stopped at a syscall's entry, it ran user code only
/// (PTRACE_SYSEMU skips the syscalls it meets; PTRACE_SYSCALL from anywhere but an entry
/// stops at the next entry), which cannot change the kernel's mask: a handler starts only
/// after a signal-delivery stop, and the library's rt_sigprocmask calls that replay makes
/// without a syscall leave their mask for wait_stop to set (run_once then keeps that one). Stopped
/// at an exit after PTRACE_SYSCALL, it ran the syscall whose entry it stood at, which changes the
/// mask only if the table says so (kSetsSignalMask).
bool mask_unchanged_by_run(const ReplayTask& t, int request, const Stop& s) {
  if (s.kind == Stop::SyscallEntry)
    return request == PTRACE_SYSEMU || request == PTRACE_SYSEMU_SINGLESTEP ||
           request == PTRACE_SYSCALL;
  if (s.kind != Stop::SyscallExit || request != PTRACE_SYSCALL) return false;
  const long nr = long(get_regs(t.tid).orig_rax);
  // rt_sigreturn's exit reads -1: the frame it restored says so (restore_sigcontext).
  return nr != -1 && !syscall_has(nr, kSetsSignalMask);
}

}  // namespace

std::optional<uint64_t> current_sigmask(ReplayTask& t) {
  if (t.blocked && t.blocked_at != resumes_so_far()) t.blocked.reset();  // it may have run
  uint64_t mask = 0;
  if (!t.blocked) {
    if (try_get_sigmask(t.tid, mask)) t.blocked = mask, t.blocked_at = resumes_so_far();
  } else if (register_cache_checked()) {
    if (try_get_sigmask(t.tid, mask) && mask != *t.blocked)
      throw Error("task " + std::to_string(t.rec_tid) + "'s signal mask is " + hex(mask) +
                  ", replay's copy of it " + hex(*t.blocked));
  }
  return t.blocked;
}

namespace {
Stop run_once_plain(ReplayTask& t, int request, const InterruptWhen& interrupt) {
  int sig = t.resume_sig;
  t.resume_sig = 0;
  if (t.restart_pending && sig == 0 && !t.signal_injected) restart_syscall_now(t.tid);
  t.restart_pending = false;
  t.signal_injected = false;
  current_sigmask(t);
  const std::optional<uint64_t> blocked = t.blocked;
  t.mask_set_at_stop = false;
  // The task runs user code only, or emulated syscalls it meets (SYSEMU) ...
  const bool emulating = request == PTRACE_SYSEMU || request == PTRACE_SYSEMU_SINGLESTEP;
  // ... or one at most, by a single step: never a syscall rewind makes it run.
  const bool own_code = emulating || request == PTRACE_SINGLESTEP;
  const bool soft = own_code && soft_debug_armed(t.tid);
  if (!soft) release_watched_pages(t);  // what runs now may write them, or change them
  Stop s = soft ? run_with_soft_slots(t, request, sig, interrupt)
                : (resume(t.tid, request, sig),        // fails only if it died:
                   wait_stop(t, request, interrupt));  // status collected
  // The mask the library left, set at the stop: the mask the program has now, whatever the
  // run did before (a trap's unblocking of SIGTRAP included).
  if (std::exchange(t.mask_set_at_stop, false)) return s;
  // The resume made the copy stale; where the mask is known unchanged, it is kept.
  constexpr uint64_t kTrapBit = signal_bit(SIGTRAP);
  const bool trapped = debugger_trap(s, request);
  if (trapped && sig == 0 && emulating) {
    // User code only ran: the mask is the one before but for the trap's unblocking.
    if (blocked && (*blocked & kTrapBit)) try_set_sigmask(t.tid, *blocked);
    t.blocked = blocked;
    t.blocked_at = resumes_so_far();
  } else if (trapped) {
    // The run may have changed the mask first (a signal delivered, a step into its handler;
    // syscalls run under PTRACE_CONT or a single step over one): that one is kept, with
    // SIGTRAP blocked again where it was blocked before the run.
    uint64_t now = 0;
    if (blocked && (*blocked & kTrapBit) && try_get_sigmask(t.tid, now))
      try_set_sigmask(t.tid, now | kTrapBit);
    t.blocked.reset();
  } else if (sig == 0 && mask_unchanged_by_run(t, request, s)) {
    t.blocked = blocked;
    t.blocked_at = resumes_so_far();
  } else {
    t.blocked.reset();
  }
  return s;
}
}  // namespace

Stop run_once(ReplayTask& t, int request, const InterruptWhen& interrupt) {
  for (;;) {
    Stop s = run_once_plain(t, request, interrupt);
    // A buffered call that replay makes for real (brk): run here, as the recording's kernel
    // ran it without a stop, and the run goes on as a new one (a software watchpoint's pages,
    // released for the call, are guarded again). A caller that takes interrupts gets one
    // here, a stop where the task ran, and resumes it itself: a watch on memory the call
    // mapped reads its value before the run goes on. A single step ends after the call.
    if (s.kind != Stop::SyscallEntry || !t.syscall_buffer ||
        (request != PTRACE_SYSEMU && request != PTRACE_SYSEMU_SINGLESTEP) ||
        !at_call_run_in_replay(t, get_regs(t.tid)))
      return s;
    run_call_in_replay(t, request == PTRACE_SYSEMU_SINGLESTEP);
    if (request == PTRACE_SYSEMU_SINGLESTEP) {
      set_single_step_status(t.tid);
      return single_step_trap();
    }
    if (interrupt.any()) {
      Stop here;
      here.kind = Stop::Interrupted;
      return here;
    }
  }
}

Stop run_to_stop(ReplayTask& t, int request) {
  for (;;) {
    Stop s = run_once(t, request);
    if (s.kind == Stop::SyscallEntry && at_buffer_pause(t)) {
      s.kind = Stop::BufferPause;
      s.status = int(take_buffer_pause(t));
      if (t.stop_at_pause) return s;
      continue;
    }
    return s;
  }
}

namespace {
std::atomic<uint64_t> stops_waited{0};
}  // namespace

uint64_t replay_stops_total() {
  return stops_waited.load(std::memory_order_relaxed);
}

Stop wait_stop(ReplayTask& t, int request, const InterruptWhen& interrupt) {
  for (;;) {
    int status = wait_interruptible(t.tid, interrupt, t.interrupt_sent);
    stops_waited.fetch_add(1, std::memory_order_relaxed);
    // Before anything reads or needs the mask: the one the library left while it ran.
    if (WIFSTOPPED(status) && set_pending_mask(t)) t.mask_set_at_stop = true;
    Stop s;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      s.kind = Stop::Exited;
      s.status = status;
      t.state = TaskState::Exited;
      t.exit_status = status;
      return s;
    }
    int sig = WSTOPSIG(status), event = status >> 16;
    if (sig == (SIGTRAP | 0x80)) {
      s.kind = syscall_stop_kind_after(t.tid, request) == PTRACE_SYSCALL_INFO_EXIT
                   ? Stop::SyscallExit
                   : Stop::SyscallEntry;
      return s;
    }
    if (event == PTRACE_EVENT_STOP && sig == SIGTRAP && t.interrupt_sent) {
      // Our PTRACE_INTERRUPT's stop (ptrace(2): its WSTOPSIG is SIGTRAP). One that comes
      // after the run it was sent for ended otherwise is resumed as if it had not happened.
      t.interrupt_sent = false;
      // The kernel reports a pending interrupt before it takes the task's own signals
      // (get_signal: a ptrace trap first, signal(7)'s queue after). A task that had just
      // trapped (a single step, an int3) or faulted when the interrupt came holds that
      // SIGTRAP or SIGSEGV pending: its own stop, which comes at the next resume before any
      // instruction runs. That stop is reported, not the interrupt; else the syscall the
      // caller runs at an Interrupted stop would find a signal stop instead.
      ProcSignals sigs = read_proc_signals(t.tid);
      if (sigs.pending & ~sigs.blocked) {
        resume(t.tid, request, 0);
        continue;
      }
      if (interrupt.any()) {
        s.kind = Stop::Interrupted;
        return s;
      }
    }
    if (event == PTRACE_EVENT_STOP) {  // group-stop, a new child's first stop, a late interrupt
      resume(t.tid, request, 0);
      continue;
    }
    if (event != 0) {
      s.kind = Stop::Event;
      s.sig = event;
      return s;
    }
    s.siginfo = get_siginfo(t.tid);
    if (is_synchronous_fault(sig, s.siginfo) || sent_by_this_process(s.siginfo)) {
      s.kind = Stop::Signal;
      s.sig = sig;
      return s;
    }
    resume(t.tid, request, 0);  // a real signal the recording does not contain
  }
}

void wait_new_task(ReplayTask& t) {
  int status = wait_task(t.tid);
  if (!WIFSTOPPED(status) || (status >> 16) != PTRACE_EVENT_STOP)
    throw DivergenceError("new task " + std::to_string(t.rec_tid) +
                          " did not start as expected (wait status " + std::to_string(status) +
                          ")");
}

}  // namespace rwd
