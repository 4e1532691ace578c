// Which stops of the replayed program are the debugger's, and what each one means for the
// operation in progress: breakpoint and watchpoint hits, single steps, recorded signals,
// syscall entries, the events between (replay_controller.h).
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cstdio>
#include <set>
#include <sstream>

#include "engine/arch/insn.h"
#include "engine/arch/siginfo.h"
#include "engine/arch/syscall_table.h"
#include "engine/arch/write_insn.h"
#include "engine/errors.h"
#include "engine/os/debug_registers.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/ticks/memory_digest.h"
#include "engine/timeline/replay_controller.h"
#include "engine/trace/buffered_records.h"

namespace rwd {

Next ReplayController::before_resume(ReplayTask& t, int request, RunCommand& cmd) {
  Registers r;
  if (!try_get_regs(t.tid, r)) {
    // Killed while stopped (its thread group is ending of another thread's fatal signal):
    // the resume only collects its end.
    cmd.request = request;
    return Next::Resume;
  }
  place_internal();
  if (!bps_.empty() || lifted_) sync_breakpoints(t);
  if (session_->events_done() >= run_.count_from && !late_watch_pending()) watches_.arm(t.tid);
  if (Next n = install_pass_trap(t); n != Next::Resume) return n;
  bool stepping = single_stepping(t);
  resume_regs_ = r;
  // Interrupted where it ran, on a breakpoint not yet executed: it goes on into the int3,
  // a hit like any other (neither one just after an event nor one reported already).
  bool on_interrupted_bp =
      interrupted_at_ == std::pair<pid_t, uint64_t>{t.rec_tid, r.rip} && bps_.patched(t.pid, r.rip);
  interrupted_at_.reset();
  if (!on_interrupted_bp && bps_.patched(t.pid, r.rip) && bps_.has(t.pid, r.rip) &&
      !(last_pause_tid_ == t.rec_tid && last_pause_rip_ == r.rip &&
        last_pause_event_ == session_->events_done())) {
    // An event left the task on a breakpoint without executing it (a signal delivery
    // entered a handler there): that is a hit too, at the point "just after the event".
    // (A single step landing on one is not: the step already stopped there.)
    at_event_start_ = resumed_in_[t.rec_tid] != session_->events_done() + 1;
    if (at_event_start_) {
      Next next = on_trap(t, r, true, 0);
      at_event_start_ = false;
      if (next != Next::Resume) return next;
      // The hit may have paused and served the debugger's next operation (a stepi from the
      // handler's first instruction): this resume is that operation's, decided again from
      // the top (whether it single-steps, its breakpoints), without reporting the hit again.
      resumed_in_[t.rec_tid] = session_->events_done() + 1;
      return before_resume(t, request, cmd);
    }
  }
  resumed_in_[t.rec_tid] = session_->events_done() + 1;
  if (!on_interrupted_bp && bps_.patched(t.pid, r.rip)) {
    // On a breakpoint: take it out for one instruction, then put it back.
    bps_.lift(t.pid, t.tid, r.rip);
    lifted_ = true;
    stepping_over_ = !stepping;
    stepped_ = true;
    cmd.request = PTRACE_SYSEMU_SINGLESTEP;
    stepped_off_ = {t.rec_tid, r.rip};
    return Next::Resume;
  }
  stepped_off_.reset();
  stepping_over_ = false;
  stepped_ = stepping;
  cmd.request = stepping ? PTRACE_SYSEMU_SINGLESTEP : request;
  // A user's continue may run for long without a stop (a loop with no syscall): a pause
  // must stop it there. Reverse operations are exact replays and are not cut short.
  if (!stepping && run_.forward()) cmd.interrupt.flag = &interrupt_;
  // A long run inside one interval leaves checkpoints behind for backward operations there.
  if (!stepping) {
    cmd.interrupt.at = inner_checkpoint_due(t);
    if (!pass_trap_.installed() && std::chrono::steady_clock::now() < trap_not_before_)
      if (auto w = pass_want(); w && t.rec_tid == w->tid)
        cmd.interrupt.at = std::min(cmd.interrupt.at, trap_not_before_);
    if (pass_trap_.installed()) cmd.interrupt.at = std::min(cmd.interrupt.at, trap_give_up_);
    if (late_watch_pending()) {  // (when due already: soon, not at the first 20 ms poll)
      cmd.interrupt.first_min_us = kLateWatchFirstLookUs;
      const double left_ms =
          std::max(kLateWatchFirstLookUs / 1000.0, run_.watch_at_ms - checkpoints_.cost_here());
      cmd.interrupt.at =
          std::min(cmd.interrupt.at, std::chrono::steady_clock::now() +
                                         std::chrono::microseconds(long(left_ms * 1000)));
    }
    cmd.interrupt.poll_ms = std::min<long>(kInterruptPollMs, IntervalCheckpoints::every().count());
  }
  return Next::Resume;
}

bool ReplayController::begin_code_patch(const ReplayTask& t, uint64_t addr, size_t len) {
  // The patch moves instructions elsewhere: single steps and breakpoints in the patched
  // bytes (the debugger's, and the timeline's own at a writing instruction) need them in
  // place. So do write watchpoints when a moved instruction may write memory (its write
  // would trap at the copy's address), and read-and-write ones always. The trampoline's own
  // code reads and writes only its own page.
  if (lifted_ || single_stepping(t) || rep_step_tid_) return false;
  // Nor into the bytes a counting trampoline is (or will be) patched over.
  if (auto w = pass_want(); w && addr < w->x + w->reach && w->x < addr + len) return false;
  for (uint64_t a = addr; a < addr + len; ++a)
    if (bps_.has(t.pid, a) || bps_.patched(t.pid, a)) return false;
  // Before a scan's window (Run::count_from) the watchpoints are not armed, and the patch
  // lives only while this interval's point is searched for.
  if (session_->events_done() < run_.count_from) return true;
  // A read-and-write watchpoint would trap at a moved read too: then nothing is moved.
  for (const Watch& w : watches_.all())
    if (w.kind != WatchKind::Write) return false;
  if (!watches_.empty() && may_write_memory(rwd::read_memory(t.tid, addr, len + 16), addr, len))
    return false;
  return true;
}

bool ReplayController::icebp_at(const ReplayTask& t, uint64_t rip) {
  auto code = rwd::read_memory(t.tid, rip, 1);
  return code.size() == 1 && code[0] == 0xf1;
}

bool ReplayController::single_stepping(const ReplayTask& t) const {
  auto* step = run_.as<runs::StepInsn>();
  return (step && t.rec_tid == step->tid) || counting_steps(t) ||
         (rep_step_tid_ && *rep_step_tid_ == t.rec_tid);
}

bool ReplayController::counting_steps(const ReplayTask& t) const {
  const StepCount* c = run_.step_count();
  if (!c || t.rec_tid != c->tid || session_->events_done() != c->event) return false;
  if (c->after_hit) return run_.hits >= c->after_hit;
  if (c->after_pass) return run_.pass_reached;
  return c->pos == 0 || paused_at_pos_;
}

bool ReplayController::take_interrupt() {
  return run_.forward() && interrupt_.exchange(false);
}

Next ReplayController::pause_interrupted(const Point& here) {
  return pause({.reason = StopReason::Interrupted}, here);
}

Next ReplayController::after_stop(ReplayTask& t, const Stop& s, RunCommand& cmd) {
  if (debug_ && s.kind != Stop::Exited)
    fprintf(stderr,
            "rewind: timeline: stop kind %d sig %d at %llx (events done %llu, stepped %d)\n",
            int(s.kind), s.sig, (unsigned long long)get_regs(t.tid).rip,
            (unsigned long long)session_->events_done(), int(stepped_));
  if (lifted_ && s.kind != Stop::Exited && s.kind != Stop::SyscallEntry) {
    lifted_ = false;
    sync_breakpoints(t);
  }
  // At a syscall entry the lifted breakpoint stays out until the next resume: the replay
  // may run the syscall again from its instruction (mmap, fork, exit: RemoteSyscall), which
  // must not meet an int3 there.
  if (s.kind != Stop::Signal) stepping_over_ = false;
  if (s.kind == Stop::Exited) return Next::Resume;
  if (s.kind == Stop::BufferPause) {
    on_buffer_pause(t, uint32_t(s.status));
    cmd.claimed = true;
    return Next::Resume;
  }
  if (s.kind == Stop::Interrupted) {
    // Stopped where it ran for a pause (before_resume passed the flag): a point between
    // events like any trap. Where a trampoline is in place the pause waits for its end.
    cmd.claimed = true;
    if (pass_trap_.installed() && std::chrono::steady_clock::now() >= trap_give_up_)
      return rearm_late_trap("the target not met in time after its late trampoline");
    if (!session_->code_patched() && take_interrupt()) {
      settle_for_trap(t);
      return pause_interrupted(trap_point(t, get_regs(t.tid)));
    }
    Registers at;
    if (try_get_regs(t.tid, at)) interrupted_at_ = std::pair<pid_t, uint64_t>{t.rec_tid, at.rip};
    if (!late_watch_ready(t)) inner_checkpoint_if_due(t);
    return Next::Resume;
  }
  if (s.kind != Stop::SyscallEntry && !session_->code_patched() && take_interrupt())
    if (Next n = pause_interrupted(trap_point(t, get_regs(t.tid))); n != Next::Resume) return n;
  if (s.kind == Stop::SyscallEntry) {
    if (stepped_) {
      // The syscall instruction saved rflags in r11 with the trap flag of our single step;
      // the program's rflags do not have it (as recorded).
      Registers r = get_regs(t.tid);
      if (r.r11 & kTrapFlag) {
        r.r11 &= ~kTrapFlag;
        set_regs(t.tid, r);
      }
    }
    return on_entry(t);
  }
  if (s.kind != Stop::Signal) return Next::Resume;
  if (s.sig != SIGTRAP) return on_signal(t, s.sig);
  uint64_t dr6 = take_debug_status(t.tid);
  if (dr6 & 1) return Next::Resume;  // the replay's own breakpoint (reaching a recorded point)
  Registers r = get_regs(t.tid);
  int code = siginfo_code(s.siginfo);
  if (stepped_ && code == TRAP_BRKPT && !(dr6 & (kSingleStepBit | kWatchBits)) &&
      !icebp_at(t, resume_regs_.rip)) {
    // Our single step, reported without DR6.BS: the kernel found no cause in DR6 and took
    // the trap for an `int1` (arch/x86/kernel/traps.c, exc_debug_user: si_code TRAP_BRKPT).
    // Seen on the development VM about once in 10^5 steps of a timeline's step count.
    dr6 |= kSingleStepBit;
    if (debug_)
      fprintf(stderr, "rewind: timeline: step trap without DR6.BS at %llx\n",
              (unsigned long long)r.rip);
  }
  if (code == SI_KERNEL) {
    if (auto n = on_pass_trap(t, r)) {
      cmd.claimed = true;
      return *n;
    }
  }
  if (code == SI_KERNEL && bps_.patched(t.pid, r.rip - 1)) {
    r.rip -= 1;  // back onto the breakpoint's instruction
    set_regs(t.tid, r);
    cmd.claimed = true;
    return on_trap(t, r, true, dr6);
  }
  if (dr6 & (kSingleStepBit | kWatchBits)) {
    cmd.claimed = true;
    // A step onto the instruction of the point the replay looks for with a hardware
    // breakpoint, which the next resume would pass: the search checks this stop too (a reverse
    // step out of a signal handler counts steps towards the signal's point; a step over a
    // breakpoint on a handler's first instruction can land on a signal's point one instruction
    // into it).
    auto leave_to_point_search = [&] {
      if (!session_->point_search_waits_at(t.rec_tid, r.rip)) return false;
      cmd.claimed = false;
      return true;
    };
    if ((dr6 & kWatchBits) == 0 && registers_equal(r, resume_regs_)) {
      // A step trap before any instruction ran: the kernel reports one when a task resumed
      // from a syscall stop with a single step. Not a step: go on.
      return Next::Resume;
    }
    if ((dr6 & kWatchBits) == 0 && stepping_over_) {
      stepping_over_ = false;
      // Stepped over a breakpoint for a continue: nothing to report, unless the step
      // landed on another breakpoint (a `ret` onto a breakpointed return address). That
      // one is hit now: the next resume steps over it without looking.
      if (bps_.patched(t.pid, r.rip)) return on_trap(t, r, true, 0);
      if (leave_to_point_search()) return Next::Resume;
      // A task that stops at every pass of a breakpoint never runs long enough for the
      // interrupt that takes checkpoints inside the interval: one is taken here when due.
      inner_checkpoint_if_due(t);
      return Next::Resume;
    }
    stepping_over_ = false;
    Next n = on_trap(t, r, false, dr6);
    if (n == Next::Resume) leave_to_point_search();
    return n;
  }
  return Next::Resume;  // the program's own SIGTRAP, as recorded
}

Next ReplayController::on_between() {
  uint64_t n = session_->events_done();
  Point here;
  here.kind = Point::Between;
  here.event = n;
  if (take_interrupt()) return pause_interrupted(here);
  // A point this run went for and did not meet again (another replay's state differed from
  // the one that found it): an error, never a stop somewhere else. Only for a point where
  // one task lived: the multi-task walks missed points before op_reverse_step stopped
  // scanning for another task's point, and whether any run still misses one there (then
  // replaying to the end of the trace and counting from there) has not been checked.
  if (auto* s = run_.as<runs::Scan>(); s && run_.arm_after.count() > 0 && missed(s->target, n))
    return rearm_late_trap("the target passed before its trampoline went in");
  if (const Point* target = run_.target(); target && target->alone && missed(*target, n))
    throw DivergenceError("timeline: the replay passed event " + std::to_string(n) +
                          " without reaching the point it was going to, in event " +
                          std::to_string(target->event) + " (this replay differs from the one " +
                          "that found it; REWIND_DEBUG_TIMELINE=1 says where)");
  auto* scan = run_.as<runs::Scan>();
  if (scan && after_ == After::ReverseContinue && scan->below && interrupt_.exchange(false))
    return interrupt_reverse_continue();
  if (run_.as<runs::Forward>()) {
    if (stop_at_process_events_) {
      if (pid_t child = forked_process(last_event_))
        return pause({.reason = StopReason::Forked, .tid = last_event_.tid, .child = child}, here);
      pid_t caller = last_event_.kind == EventKind::Exec ? exec_caller(last_event_) : 0;
      if (caller) return pause({.reason = StopReason::Execed, .tid = caller}, here);
      if (pid_t ended = ended_process(last_event_))
        return pause({.reason = StopReason::ProcessExited,
                      .tid = last_event_.tid,
                      .pid = ended,
                      .status = last_event_.status},
                     here);
    }
    if (stop_at_code_mappings_ && maps_code(last_event_))
      return pause({.reason = StopReason::CodeMapped, .tid = last_event_.tid}, here);
    if (stop_after_event_ && n == stop_after_event_)
      return pause({.reason = StopReason::Seek, .tid = last_event_.tid}, here);
  } else if (auto* step = run_.as<runs::StepInsn>()) {
    if (made_by(last_event_, step->tid) && consumes_instruction(last_event_))
      return pause({.reason = StopReason::Step, .tid = step->tid}, here);
  } else if (auto* go = run_.as<runs::Goto>()) {
    if (reached(go->target, here)) {
      // A seek to the event that ended the last task (one killed by a signal: an exit
      // stops at its entry, on_entry) is at the end of the trace.
      StopInfo si = go->report;
      if (si.reason == StopReason::Seek && live_tasks() == 0) si.reason = StopReason::TraceEnd;
      return pause(si, here);
    }
  } else if (scan) {
    // A reverse continue looking further back: the last scan found no hit after event
    // `below` (it started there), so this one is done when it gets there.
    if (after_ == After::ReverseContinue && scan->below && n >= scan->below) return scan_done();
    if (reached(scan->target, here)) return scan_done();
  } else if (auto* steps = run_.as<runs::Steps>()) {
    // No step at all from the event: the point is just after it. (Steps after a pass stop
    // at that pass instead, on_pass_trap.)
    if (n == steps->from.event && steps->count == 0 && !steps->from.after_pass)
      return pause(steps->report, here);
  }
  return Next::Resume;
}

Next ReplayController::on_entry(ReplayTask& t) {
  uint64_t next = session_->events_done() + 1;
  Point here;
  here.kind = Point::Entry;
  here.event = next;
  here.tid = t.rec_tid;
  Registers r = get_regs(t.tid);
  // (A main thread that ended first stays listed, as Exited, until its status comes.)
  bool ending = syscall_has(long(r.orig_rax), kExit) && live_tasks() == 1;
  // The end of the trace is the last task at its exit, still inspectable: where forward
  // runs stop, and seeks to any later event (the exit's own, its task's end).
  auto* go = run_.as<runs::Goto>();
  bool seek_past = go && go->report.reason == StopReason::Seek && !reached(go->target, here) &&
                   go->target.event >= next;
  if (ending && (run_.forward() || seek_past)) {
    // Nothing lies beyond: every forward operation ends here again.
    return pause_at_end({.reason = StopReason::TraceEnd, .tid = t.rec_tid}, here);
  }
  if (go && reached(go->target, here)) return pause(go->report, here);
  if (auto* scan = run_.as<runs::Scan>()) {
    if (counting_steps(t)) count_step(r.rip);
    if (reached(scan->target, here)) return scan_done();
  }
  if (auto* steps = run_.as<runs::Steps>())
    if (counting_steps(t) && steps->count > 0 && --steps->count == 0)
      return pause(steps->report, here);
  return Next::Resume;
}

Next ReplayController::on_signal(ReplayTask& t, int sig) {
  // A recorded signal about to be delivered: the point a forward run stopped at for it (a
  // reverse step from there scans to it; a seek back goes to it). Only the timeline's own
  // traps show it otherwise, and the replay reaches it with its own breakpoint.
  const Point* target = run_.target();
  if (target && replaying_->kind == EventKind::Signal && replaying_->signo == sig &&
      replaying_->tid == t.rec_tid && target->kind == Point::Trap &&
      reached(*target, trap_point(t, get_regs(t.tid)))) {
    if (run_.as<runs::Scan>()) return scan_done();
    return pause(run_.as<runs::Goto>()->report, trap_point(t, get_regs(t.tid)));
  }
  // The arrival of a signal moves the task like an instruction (to its handler, or to its
  // end): reverse steps count it.
  // (Never a landing past skipped code: a Steps run does not stop at a signal's arrival.)
  if (run_.as<runs::Scan>() && counting_steps(t)) count_step(std::nullopt);
  if (auto* steps = run_.as<runs::Steps>(); steps && counting_steps(t) && steps->count > 0)
    --steps->count;
  if (!run_.forward()) return Next::Resume;
  // Only the recorded signal itself; the replay's own traps (emulated rdtsc) are not stops.
  if (replaying_->kind != EventKind::Signal || replaying_->signo != sig ||
      replaying_->tid != t.rec_tid)
    return Next::Resume;
  Point here = trap_point(t, get_regs(t.tid));
  // orig_rax tells how the kernel was entered for this stop: -1 from the replay's trap (and
  // the recorder's). A signal that came as the task's syscall returned stands where the
  // point just after that syscall's event does, whose orig_rax is the call's number, as
  // natively (a step back or a seek reaches it so): shown so here too.
  if (here.kind == Point::Trap && last_event_.kind == EventKind::Syscall &&
      last_event_.tid == t.rec_tid && last_event_.number == session_->events_done() &&
      here.regs.rip == last_event_.regs.rip && here.regs.rax == uint64_t(last_event_.result))
    here.regs.orig_rax = last_event_.regs.orig_rax;
  // A signal that ends the process (the trace's next event is a task of its thread group
  // killed by it; the other threads' ends can come before its own): nothing after it can be
  // inspected, so this is also the end of the trace, and forward operations stay here.
  const Event* next = session_->next_event();
  const ReplayTask* next_task = next ? live(next->tid) : nullptr;
  bool fatal = next && next->kind == EventKind::Exit && next_task && next_task->pid == t.pid &&
               WIFSIGNALED(next->status) && WTERMSIG(next->status) == sig;
  StopInfo si;
  si.reason = StopReason::Signal;
  si.tid = t.rec_tid;
  si.signo = sig;
  si.fatal = fatal;
  if (Next n = pause(si, here); n != Next::Resume || !fatal) return n;
  si.reason = StopReason::TraceEnd;
  if (!run_.forward()) return Next::Replay;
  return pause_at_end(si, here);
}

Next ReplayController::on_trap(ReplayTask& t, const Registers& r, bool breakpoint, uint64_t dr6) {
  StopInfo si;
  si.tid = t.rec_tid;
  bool user_hit = false;
  if (breakpoint && bps_.has(t.pid, r.rip)) {
    si.reason = StopReason::Breakpoint;
    si.addr = r.rip;
    user_hit = true;
  }
  for (auto& w : watches_.all()) {
    if (!(dr6 & (1ull << w.slot))) continue;
    si.reason = StopReason::Watchpoint;
    si.addr = w.addr;
    si.old_value = w.last;
    si.new_value = rwd::read_memory(t.tid, w.addr, size_t(w.len));
    w.last = si.new_value;
    user_hit = true;
  }
  if (session_->events_done() < run_.count_from) user_hit = false;  // before the window
  bool stepped = (dr6 & kSingleStepBit) != 0;
  // At the target of a Goto or Scan: the task, event and state it names.
  auto at_target = [&](const Point& target) {
    return session_->events_done() == target.event && target.kind == Point::Trap &&
           t.rec_tid == target.tid && reached(target, trap_point(t, r));
  };
  if (run_.as<runs::Forward>()) return user_hit ? pause(si, trap_point(t, r)) : Next::Resume;
  if (auto* step = run_.as<runs::StepInsn>()) {
    if (!user_hit && !(stepped && t.rec_tid == step->tid)) return Next::Resume;
    if (!user_hit) si.reason = StopReason::Step;
    return pause(si, trap_point(t, r));
  }
  if (auto* go = run_.as<runs::Goto>()) {
    if (at_target(go->target)) {
      rep_step_tid_.reset();
      if (Next n = pause(go->report, trap_point(t, r)); n != Next::Resume) return n;
    }
    follow_rep_target(t, r);
    return Next::Resume;
  }
  if (auto* scan = run_.as<runs::Scan>()) {
    if (debug_ && r.rip == scan->target.regs.rip)
      fprintf(stderr, "rewind: timeline: scan trap at the target's rip, event %llu (target %llu)\n",
              (unsigned long long)session_->events_done(), (unsigned long long)scan->target.event);
    if (stepped && counting_steps(t)) count_step(r.rip);
    if (scan->count_arrivals && breakpoint && t.rec_tid == scan->target.tid &&
        r.rip == scan->count_arrivals && session_->events_done() + 1 == scan->target.event)
      ++run_.passes;
    if (at_target(scan->target)) {
      // A write that trapped here happened before now: it counts, unless the reverse run
      // stops after writes (that stop is now). A breakpoint here is now, not before.
      if (si.reason == StopReason::Watchpoint && (!scan->after_write || scan->window_end)) {
        ++run_.hits;
        si.event = session_->events_done();
        run_.last_hit_info = si;
      }
      rep_step_tid_.reset();
      return scan_done();
    }
    // A window's end found by a breakpoint at its instruction, in a loop run millions of
    // times between two events: each pass is a stop. As for its trampoline (window_end_miss),
    // past kWindowEndMisses of them the scan counts to the reverse continue's own point.
    if (breakpoint && scan->window_end && !scan->find_by_trap && r.rip == scan->target.regs.rip)
      if (auto n = window_end_miss()) return *n;
    follow_rep_target(t, r);
    if (user_hit) {
      ++run_.hits;
      si.event = session_->events_done();
      run_.last_hit_info = si;
      // As after a breakpoint's step-over (after_stop): frequent writes leave no time for
      // the interrupt that takes checkpoints inside the interval.
      if (si.reason == StopReason::Watchpoint) inner_checkpoint_if_due(t);
    }
    return Next::Resume;
  }
  if (auto* hit = run_.as<runs::HitNumber>()) {
    if (!user_hit) return Next::Resume;
    if (!reaches_hit(si, hit->count)) {
      // As in a scan: checkpoints on the way, which the next reverse continue from this
      // run's hit starts near (reverse_continue_from_hit).
      if (si.reason == StopReason::Watchpoint) inner_checkpoint_if_due(t);
      return Next::Resume;
    }
    if (si.reason == StopReason::Watchpoint && !hit->after_write) {
      // The trap comes after the write; a backward user stops before it (as gdb expects in
      // reverse): one instruction back, reporting this write. Where the writing instruction
      // is known, at the task's last arrival there before this hit.
      if (auto w = writing_insn(t, r, si)) {
        runs::PassCount count{.tid = t.rec_tid, .addr = *w, .hit = hit->count, .report = si};
        pass_bp_ = site_in(t.pid, *w);
        bps_.add_internal(*pass_bp_);
        run_ = Run::same_start(count, run_);
        return Next::Replay;
      }
      return step_back_from_hit(t, r, si, hit->count);
    }
    // (Set before the pause: the next operation runs inside it.)
    hit_origin_ = HitOrigin{.from = run_, .hit = hit->count, .after_write = hit->after_write};
    return pause(si, trap_point(t, r));
  }
  if (auto pc = run_.as<runs::PassCount>()) {
    if (breakpoint && t.rec_tid == pc->tid && r.rip == pc->addr) ++run_.steps;
    if (!user_hit || !reaches_hit(si, pc->hit)) return Next::Resume;
    if (stepped_off_ == std::pair(t.rec_tid, pc->addr) && run_.steps > 0) {
      // The hit came as the task stepped over the writing instruction: its last arrival
      // there is the point before the write.
      runs::PassNumber go{
          .tid = pc->tid, .addr = pc->addr, .count = run_.steps, .report = pc->report};
      run_ = Run::same_start(go, run_);
      return Next::Replay;
    }
    bps_.remove_internal(*std::exchange(pass_bp_, std::nullopt));
    return step_back_from_hit(t, r, pc->report, pc->hit);
  }
  if (auto pn = run_.as<runs::PassNumber>()) {
    if (breakpoint && t.rec_tid == pn->tid && r.rip == pn->addr &&
        (!pn->event || session_->events_done() == pn->event) && ++run_.steps == pn->count) {
      if (pn->then_step_back) return step_back_from_arrival(t, r, pn->report);
      return pause(pn->report, trap_point(t, r));
    }
    return Next::Resume;
  }
  auto& steps = *run_.as<runs::Steps>();
  if (debug_)
    fprintf(stderr, "rewind: timeline: steps run trap at %llx, stepped %d, left %llu\n",
            (unsigned long long)r.rip, int(stepped), (unsigned long long)steps.count);
  // Counted as the scan counted them: this trap's step before its hit.
  bool counting = stepped && counting_steps(t);
  if (user_hit) ++run_.hits;
  if (counting && steps.count > 0 && --steps.count == 0)
    if (Next n = pause(steps.report, trap_point(t, r)); n != Next::Resume) return n;
  // No step at all: the point is the hit the steps start after.
  const StepCount& from = steps.from;
  if (from.after_hit && steps.count == 0 && user_hit && run_.hits == from.after_hit &&
      t.rec_tid == from.tid && session_->events_done() == from.event)
    return pause(steps.report, trap_point(t, r));
  return Next::Resume;
}

bool ReplayController::reaches_hit(StopInfo& si, uint64_t n) {
  if (++run_.hits < n) {
    si.event = session_->events_done();
    run_.last_hit_info = si;
    return false;
  }
  return run_.hits == n;
}

Next ReplayController::step_back_from_hit(const ReplayTask& t, const Registers& r,
                                          const StopInfo& si, uint64_t hit) {
  // When the hit before was this task's write in the same run between events, the steps
  // count from there (a loop's previous write), else from the task's last event.
  const auto& prev = run_.last_hit_info;
  bool from_prev = prev && prev->reason == StopReason::Watchpoint && prev->tid == t.rec_tid &&
                   prev->event == session_->events_done();
  final_report_ = si;
  here_ = trap_point(t, r);
  step_tid_ = t.rec_tid;
  return start_scan(After::ReverseStep, true, from_prev ? hit - 1 : 0);
}

std::optional<uint64_t> ReplayController::writing_insn(const ReplayTask& t, const Registers& r,
                                                       const StopInfo& si) {
  const Watch* w = nullptr;
  for (const auto& x : watches_.all())
    if (x.addr == si.addr) w = &x;
  // Enough bytes before it to decode forwards from several earlier places (write_insn.h).
  constexpr uint64_t kBefore = 64;
  if (!w || r.rip < kBefore) return std::nullopt;
  std::vector<uint8_t> code = rwd::read_memory(t.tid, r.rip - kBefore, kBefore);
  if (code.size() != kBefore) return std::nullopt;  // the page before is not mapped
  bps_.hide(t.pid, r.rip - kBefore, code);
  return writing_insn_before(r.rip, code, r, w->addr, uint64_t(w->len));
}

void ReplayController::on_buffer_pause(const ReplayTask& t, uint32_t pos) {
  const StepCount* c = run_.step_count();
  if (c && t.rec_tid == c->tid && session_->events_done() == c->event && pos == c->pos)
    paused_at_pos_ = true;
}

void ReplayController::follow_rep_target(const ReplayTask& t, const Registers& r) {
  const Point* target = run_.target();
  if (!target || target->kind != Point::Trap || t.rec_tid != target->tid ||
      session_->events_done() != target->event || r.rip != target->regs.rip) {
    if (rep_step_tid_ && *rep_step_tid_ == t.rec_tid) rep_step_tid_.reset();
    return;
  }
  auto code = rwd::read_memory(t.tid, r.rip, 16);
  bps_.hide(t.pid, r.rip, code);  // the breakpoint on the target's rip
  if (rep_string_insn_length(code.data(), code.size()) > 0) rep_step_tid_ = t.rec_tid;
}

Next ReplayController::on_end() {
  // As in event_done: the steps after a counted pass missed the point.
  if (const StepCount* c = run_.step_count(); c && c->after_pass)
    return pass_fall_back("the trace ended before the point");
  Point here;
  here.kind = Point::Between;
  here.event = session_->events_done();
  if (run_.as<runs::Scan>()) return scan_done();  // the target was the end
  return pause_at_end({.reason = StopReason::TraceEnd, .tid = last_event_.tid}, here);
}

Next ReplayController::pause_at_end(const StopInfo& si, const Point& here) {
  for (;;) {
    if (Next n = pause(si, here); n != Next::Resume) return n;
    if (!run_.forward()) return Next::Replay;
  }
}

Point ReplayController::trap_point(const ReplayTask& t, const Registers& r) {
  Point p;
  if (at_event_start_) {
    p.kind = Point::Between;
    p.event = session_->events_done();
    return p;
  }
  p.kind = Point::Trap;
  p.event = session_->events_done();
  p.tid = t.rec_tid;
  p.regs = r;
  p.alone = live_tasks() == 1;
  return p;
}

Next ReplayController::rearm_late_trap(const char* why) {
  if (debug_) fprintf(stderr, "rewind: timeline: %s: again with it from the start\n", why);
  uint64_t from = run_.late_from ? run_.late_from : run_.inner;
  run_ = Run::same_start(*run_.as<runs::Scan>(), run_);
  run_.inner = from;
  if (run_.as<runs::Scan>()->count_passes) pass_inner_ = from;
  return Next::Replay;
}

bool ReplayController::missed(const Point& target, uint64_t done) {
  return target.kind == Point::Trap && done > target.event;
}

// A TimelinePosition's kind is a Point's, value for value.
static_assert(int(TimelinePosition::Between) == int(Point::Between) &&
              int(TimelinePosition::Entry) == int(Point::Entry) &&
              int(TimelinePosition::Trap) == int(Point::Trap));

TimelinePosition ReplayController::position_here() const {
  TimelinePosition p;
  p.kind = TimelinePosition::Kind(here_.kind);  // (the same values: timeline_types.h)
  p.event = here_.event;
  p.tid = here_.tid;
  if (here_.kind == Point::Trap) {
    p.regs = here_.regs;
    if (const ReplayTask* t = live(here_.tid)) p.digest = point_digest(*t);
  }
  return p;
}

bool ReplayController::at_position(const TimelinePosition& p) {
  Point target;
  target.kind = Point::Kind(p.kind);
  target.event = p.event;
  target.tid = p.tid;
  target.regs = p.regs;
  target.digest = p.digest;
  return reached(target, here_);
}

LiveMemory ReplayController::live_memory_of(const ReplayTask& t) const {
  std::vector<uint64_t> rsps;
  DigestExclusions buffers;
  for (const auto& [rec, x] : session_->tasks()) {
    if (x.pid != t.pid) continue;
    Registers r;
    if (x.state != TaskState::Exited && try_get_regs(x.tid, r)) rsps.push_back(r.rsp);
    // Replay writes a buffer's records ahead of the task up to the pause its run plans
    // (buffer_fill.cpp): two runs to one point may hold other bytes there (a checkpoint taken
    // in a run with a pause ahead was never found again by a scan without one). Left out, as
    // a recorded point's digest leaves them out.
    if (x.syscall_buffer) buffers.push_back(buffer_digest_exclusion(x.syscall_buffer));
  }
  LiveMemory m = live_memory(t.tid, rsps);
  m.dead.insert(m.dead.end(), buffers.begin(), buffers.end());
  return m;
}

MemoryDigest ReplayController::point_digest(const ReplayTask& t) const {
  LiveMemory m = live_memory_of(t);
  return digest_memory(t.tid, m.maps, m.dead);
}

void ReplayController::set_point_digests(Point& p, const ReplayTask& t) const {
  LiveMemory m = live_memory_of(t);
  p.digest = digest_memory(t.tid, m.maps, m.dead);
  p.window = digest_stack_window(t.tid, m.maps, m.dead, p.regs.rsp);
}

bool ReplayController::reached(const Point& target, const Point& at) {
  if (target.kind != at.kind || target.event != at.event) return false;
  if (target.kind == Point::Between) return true;
  if (target.tid != at.tid) return false;
  if (target.kind == Point::Entry) return true;
  if (target.regs.rip != at.regs.rip) return false;
  // orig_rax is the kernel's note of how the stop was reached, not program state (a signal's
  // stop shows the syscall's, on_signal): a point ignores it, as PointSearch::at_point does.
  Registers at_regs = at.regs;
  at_regs.orig_rax = target.regs.orig_rax;
  if (auto d = first_register_difference(target.regs, at_regs)) {
    if (debug_) fprintf(stderr, "rewind: timeline: at the target's rip, but %s\n", d->c_str());
    return false;
  }
  const ReplayTask* t = live(at.tid);
  bool same = false;
  LiveMemory m;
  if (t) {
    // The stack window first: a loop whose registers repeat keeps its counter there.
    m = live_memory_of(*t);
    if (target.window &&
        digest_stack_window(t->tid, m.maps, m.dead, at.regs.rsp) != *target.window) {
      if (debug_) fprintf(stderr, "rewind: timeline: at the target's registers, stack differs\n");
      return false;
    }
    same = digest_memory(t->tid, m.maps, m.dead) == target.digest;
  }
  if (debug_ && !same) {
    fprintf(stderr, "rewind: timeline: at the target's registers, memory differs\n");
    if (t) {
      // What the digest hashed: the report leaves out what the digest leaves out.
      std::string now = digest_report(t->tid, m.dead);
      std::istringstream a(target_report_), b(now);
      std::set<std::string> was, is;
      for (std::string l; std::getline(a, l);) was.insert(l);
      for (std::string l; std::getline(b, l);) is.insert(l);
      for (const std::string& l : was)
        if (!is.count(l)) fprintf(stderr, "rewind: timeline:   target: %s\n", l.c_str());
      for (const std::string& l : is)
        if (!was.count(l)) fprintf(stderr, "rewind: timeline:   here:   %s\n", l.c_str());
    }
  }
  return same;
}

}  // namespace rwd
