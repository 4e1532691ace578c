// PTRACE_INTERRUPT of a tracee that runs (in user code, waiting in a syscall, or waiting for
// its turn), made by a recorded tracer. Natively the kernel stops it at once with
// PTRACE_EVENT_STOP: a syscall it waits in returns to be restarted (-ERESTARTSYS and the
// like), and the stop comes on its way back to user code. Here the recorder asks the kernel
// for the same interrupt on the real task (rewind is its real tracer) and turns the first stop
// where replay's copy can stand too into the tracee's stop for its tracer: the exit of the
// syscall it was in, after that syscall's event; or, in user code, a point of its own (a Sched
// event), as a preemption's. Where no point may be (inside the preload library's buffered
// call or a string instruction) or replay could find it only by a stop at every pass (no
// trampoline fits), it goes on and is asked again at the next tick.
#include <sys/ptrace.h>

#include "engine/arch/insn.h"
#include "engine/os/tracee_memory.h"
#include "engine/record/record_session.h"
#include "engine/replay/point_trampoline.h"

namespace rwd {

void RecordSession::interrupt_for_tracer(RecordTask& tracee) {
  tracee.tracer_interrupt_pending = true;
  tracee.tracer_interrupt_tick = ticks_;
  // Stopped by rewind already (waiting for its turn), it stops again as soon as it resumes.
  ptrace(PTRACE_INTERRUPT, tracee.tid, nullptr, nullptr);
  update_timer();  // ticks for retry_tracer_interrupts
}

bool RecordSession::interrupt_stop_after_syscall(RecordTask& t) {
  if (!t.tracer_interrupt_pending || t.tracer <= 0 || t.tracer_stop) return false;
  // Its registers are the syscall's exit, a restart result included: where replay's copy
  // stands after the event too (it restarts the call when it resumes, as the kernel does).
  t.tracer_interrupt_pending = false;
  t.blocked = false;
  t.tracer_stop_at_event = true;
  stop_for_tracer(t, SIGTRAP, TracerStop::Interrupt, PTRACE_EVENT_STOP);
  return true;
}

bool RecordSession::interrupt_stop_in_user_code(RecordTask& t) {
  if (!t.tracer_interrupt_pending || t.tracer <= 0 || t.tracer_stop ||
      t.state == RunState::InSyscall)
    return false;
  t.interrupt_requested = false;  // a preemption's interrupt, if one came too, is this stop
  const Registers regs = get_regs(t.tid);
  if (rep_insn_at(t.tid, regs.rip) || t.buffer.must_not_stop_at(regs.rip)) {
    // A buffered call that waited returns to the library, which makes it again traced: that
    // call is interrupted in turn (retry_tracer_interrupts).
    abort_waiting_call(t);
    resume_syscall(t);
    return true;
  }
  // Where no trampoline fits (a tight loop), replay would stop at every pass of the
  // instruction to find the point: asked again at the next tick, somewhere else, as a
  // preemption is (RecordSession::preempt), up to the same limit.
  if (t.tracer_interrupt_put_offs < kMaxPutOffPreemptions && !point_trampoline_fits(t.tid, regs)) {
    ++t.tracer_interrupt_put_offs;
    t.tracer_interrupt_tick = ticks_;
    resume_syscall(t);
    return true;
  }
  t.tracer_interrupt_put_offs = 0;
  if (!write_sched_event(t, regs)) return true;  // killed: its exit comes next
  t.tracer_interrupt_pending = false;
  t.tracer_stop_at_event = true;
  stop_for_tracer(t, SIGTRAP, TracerStop::Interrupt, PTRACE_EVENT_STOP);
  return true;
}

void RecordSession::retry_tracer_interrupts() {
  for (auto& [tid, t] : tasks_) {
    if (!t.tracer_interrupt_pending || t.tracer_stop || ticks_ == t.tracer_interrupt_tick) continue;
    // Running user code, or waiting in a traced syscall (the one a buffered call became): a
    // second interrupt of one already on its way is only a stop more, which goes on.
    if (t.state == RunState::UserRunning || (t.state == RunState::InSyscall && t.blocked)) {
      ptrace(PTRACE_INTERRUPT, t.tid, nullptr, nullptr);
      t.tracer_interrupt_tick = ticks_;
    }
  }
}

}  // namespace rwd
