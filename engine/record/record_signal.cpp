// Recording signals (rr's record_signal): synchronous faults and signals from outside, their
// delivery point and handler frame, signals that arrive inside buffered calls or repeated
// string instructions, and rdtsc trapped through PR_SET_TSC (record_session.h).
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "engine/arch/displaced_code.h"
#include "engine/arch/emulated_insns.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/cpuid_query.h"
#include "engine/os/debug_registers.h"
#include "engine/os/proc.h"
#include "engine/record/record_session.h"
#include "engine/record/record_setup.h"
#include "engine/record/signal_disposition.h"
#include "engine/replay/point_trampoline.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

bool RecordSession::emulate_insn(RecordTask& t, Registers& regs) {
  // rdtsc or rdtscp trapped through PR_SET_TSC, or the stand-in that replaced it or a cpuid
  // (insn_patch.h).
  auto bytes = read_memory(t.tid, regs.rip, 3);
  auto insn = decode_emulated(bytes.data(), bytes.size());
  if (!insn) return false;
  EventKind kind = EventKind::Rdtsc;
  if (insn->op == EmulatedOp::Cpuid) {
    // Run here, on the CPU the task ran on (its APIC id is in leaf 1): what it would have
    // read natively (the Intel SDM's CPUID: leaf eax, subleaf ecx; the upper halves of the
    // four registers are cleared).
    CpuidResult r = cpuid_on(t.cpu_reader.last_cpu(t.tid), uint32_t(regs.rax), uint32_t(regs.rcx));
    regs.rax = r.eax, regs.rbx = r.ebx, regs.rcx = r.ecx, regs.rdx = r.edx;
    kind = EventKind::Cpuid;
  } else {
    unsigned aux = 0;
    uint64_t tsc;
    if (insn->op == EmulatedOp::Rdtscp) {
      tsc = __rdtscp(&aux);
      regs.rcx = aux;
    } else {
      tsc = __rdtsc();
    }
    regs.rax = tsc & 0xffffffffu;
    regs.rdx = tsc >> 32;
  }
  regs.rip += insn->len;
  set_regs(t.tid, regs);
  take_buffered(t);
  Event e;
  e.kind = kind;
  e.tid = t.tid;
  e.regs = regs;
  write(e);
  return true;
}

Event RecordSession::signal_event(RecordTask& t, int sig, const SigInfo& si) {
  Event e;
  e.kind = EventKind::Signal;
  e.tid = t.tid;
  e.regs = get_regs(t.tid);
  e.signo = sig;
  e.siginfo = si;
  return e;
}

void RecordSession::put_off_signal(RecordTask& t, int sig, const SigInfo& si) {
  for (const PutOffSignal& p : t.put_off)
    if (!p.sent && p.sig == sig && sig < SIGRTMIN) return;
  t.put_off.push_back({sig, si, false});
}

namespace {

/// The first of `t`'s put-off signals `sig` that the recorder has sent again and that has not
/// arrived yet; t.put_off.end() when none.
std::vector<PutOffSignal>::iterator first_sent(RecordTask& t, int sig) {
  return std::find_if(t.put_off.begin(), t.put_off.end(),
                      [&](const PutOffSignal& p) { return p.sent && p.sig == sig; });
}

}  // namespace

void RecordSession::take_back_put_off(RecordTask& t, int sig, const SigInfo& si) {
  if (sent_by_this_process(si)) {
    auto p = first_sent(t, sig);
    if (p != t.put_off.end()) {
      p->sent = false;  // one the recorder sent again: put off once more, as it first came
      return;
    }
  }
  put_off_signal(t, sig, si);
}

void RecordSession::send_put_off(RecordTask& t) {
  for (PutOffSignal& p : t.put_off) {
    if (p.sent) continue;
    p.sent = true;
    syscall(SYS_tgkill, t.pid, t.tid, p.sig);
  }
}

bool RecordSession::put_off_if_now_blocked(RecordTask& t, int sig, const SigInfo& si) {
  if (sig == SIGSYS && siginfo_code(si) == 1 /* SYS_SECCOMP: forced through any mask */)
    return false;
  if (!(read_proc_signals(t.tid).blocked & (1ull << (sig - 1)))) return false;
  // Delivered here, the kernel would queue it again (blocked: kernel/signal.c ptrace_signal)
  // and the handler would not run where the event says it did.
  put_off_signal(t, sig, si);
  send_put_off(t);
  return true;
}

int RecordSession::step_insn_putting_off(RecordTask& t) {
  int st = step_insn(t);
  for (int others = 0; others < 64 && WIFSTOPPED(st) && (st >> 16) == 0; ++others) {
    const int other = WSTOPSIG(st);
    SigInfo other_si = get_siginfo(t.tid);
    if (other == SIGTRAP || is_synchronous_fault(other, other_si)) break;
    // Another signal from outside arrived before the instruction ran: it waits with the one
    // being delivered, as two pending signals would (sent again once that one is delivered).
    take_back_put_off(t, other, other_si);
    st = step_insn(t);
  }
  return st;
}

void RecordSession::deliver_signal(RecordTask& t, int sig, const SigInfo& arrived) {
  SigInfo si = arrived;
  const auto started = std::chrono::steady_clock::now();
  if (t.deferred_at) {
    // The task is on its way out of a string instruction, with a signal put off to the end
    // of it: this one waits there too (the int3 that may stand there stays as it is).
    put_off_signal(t, sig, si);
    return resume_syscall(t, 0);
  }
  const uint64_t at = get_regs(t.tid).rip;
  Registers regs;
  uint64_t after_rep = 0;
  bool stepped = false, left_buffer_code = false;
  for (;;) {
    // (The hops below step plain instructions only, never a syscall.)
    left_buffer_code |= step_out_of_buffer_code(t);
    regs = get_regs(t.tid);
    if (size_t len = rep_insn_at(t.tid, regs.rip)) {
      after_rep = regs.rip + len;  // no breakpoint finds a point inside it again: let it finish
      break;
    }
    // Right where its last syscall's event left it (the signal came as the call returned, a
    // raise(3)): replay's copy stands there at that event, with nothing to find.
    const bool at_syscall = !stepped && t.stop_follows_exit && regs.rip == t.exit_rip;
    const bool at_exit = at_syscall && !is_restart_result(t.exit_result);
    if (t.signal_hops >= kMaxSignalHops || point_trampoline_fits(t.tid, regs)) {
      // The search below only in the program's own run of user code: not where the task's
      // last syscall left it (a call the signal interrupted, or one that returned as it
      // came), nor where the signal came in the library's code, nor in a task that a recorded
      // tracer traces (its steps are the tracer's to see).
      if (t.signal_lapped || at_syscall || left_buffer_code || t.tracer != 0 ||
          t.signal_hops >= kMaxSignalHops)
        break;
      // Where the same registers come back at a later pass of this instruction, replay's
      // trampoline would stop at every pass and compare the memory digest: on, once, to an
      // instruction whose registers differ from pass to pass (signal_point.cpp), and the
      // tests above made again there.
      t.signal_lapped = true;
      std::optional<int> steps = step_to_distinct_signal_point(t, regs, sig, si);
      if (!steps) return;      // another stop came, handled: the signal arrives after it
      if (*steps == 0) break;  // not stepped: here
      stepped = true;
      continue;
    }
    if (at_exit) break;
    // Replay would find this point only by a stop at every pass of its instruction (at a
    // call, say: RecordSession::preempt). The kernel may deliver a signal an instruction
    // later too: the task is stepped one on (a step runs it as it would run unobserved), and
    // the test is made again there.
    std::vector<uint8_t> code = read_memory(t.tid, regs.rip, 16);
    StepKind kind = step_kind(code.data(), code.size(), regs.rip);
    if (kind == StepKind::None) break;
    if (t.signal_hops++ == 0) ++put_off_signals_;
    if (kind == StepKind::Branch) ++branch_steps_;
    int st = step_insn_putting_off(t);
    if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP || (st >> 16) != 0) {
      // It faulted, ended, or another signal came first: that stop is handled, and this
      // signal is sent again, to arrive after it (with its first siginfo: on_signal).
      put_off_signal(t, sig, si);
      send_put_off(t);
      return handle_stop(t, st);
    }
    stepped = true;
  }
  if (left_buffer_code && put_off_if_now_blocked(t, sig, si)) {
    t.signal_hops = 0;  // it comes again at the unblock, and is stepped on from there
    t.signal_lapped = false;
    t.state = RunState::UserRunning;
    return resume_syscall(t, 0);
  }
  // Stepped: the task now stands at a step's SIGTRAP stop, and resuming it with `sig` there
  // would hand the handler a plain SI_USER siginfo (ptrace(2), "Signal-delivery-stop": a
  // changed signal number rewrites it). Its own siginfo (a SIGSYS's syscall number) goes
  // with it.
  if (sig == SIGSYS && siginfo_code(si) == 1 /* SYS_SECCOMP */ && regs.rip != at) {
    // A filter's trap of a call the preload library made: the handler sees it where the
    // task stepped out of the library, and its si_call_addr says so too, as natively the
    // address after the trapped `syscall` is the handler's rip (seccomp(2)).
    std::memcpy(si.data() + 16, &regs.rip, sizeof regs.rip);
  }
  if (regs.rip != at || stepped) set_siginfo(t.tid, si);
  if (after_rep) {
    if (t.signal_hops++ == 0) ++put_off_signals_;
    put_off_signal(t, sig, si);
    t.deferred_at = after_rep;
    if (hardware_debug_registers() && !tracer_slot0_armed(t)) {
      set_exec_breakpoint(t.tid, t.deferred_at);
    } else {
      // No debug registers for programs here (debug_registers.h), or slot 0 is the tracer's
      // (tracer_debug_registers.cpp): an int3 there instead, taken out when reached. The task's
      // other threads wait for their turn meanwhile.
      std::vector<uint8_t> was = read_memory(t.tid, t.deferred_at, 1);
      const uint8_t int3 = 0xcc;
      if (was.size() == 1) {
        t.deferred_byte = was[0];
        write_memory(t.tid, t.deferred_at, &int3, 1);
      }
    }
    t.state = RunState::UserRunning;
    return resume_syscall(t, 0);
  }
  t.signal_hops = 0;
  t.signal_lapped = false;
  Event e = signal_event(t, sig, si);
  if (!set_point(e, t)) return;  // killed: its exit comes next
  take_buffered(t);
  t.state = RunState::UserRunning;
  start_slice(t);
  deliver_and_write(t, e);
  send_put_off(t);  // those that arrived while it was stepped on
  if (is_timer_expiry(sig, si)) {
    auto now = std::chrono::steady_clock::now();
    t.timer_free_at = now + (now - started);
  }
}

bool RecordSession::hold_timer_expiry(RecordTask& t, int sig, const SigInfo& si) {
  if (!is_timer_expiry(sig, si)) return false;
  if (t.held_sig) {
    if (t.held_sig != sig) return false;
    ++held_expiries_;
    return true;  // merged with the one held
  }
  if (!t.put_off.empty() || std::chrono::steady_clock::now() >= t.timer_free_at) return false;
  t.held_sig = sig;
  t.held_si = si;
  ++held_expiries_;
  if (!next_release_ || t.timer_free_at < *next_release_) next_release_ = t.timer_free_at;
  return true;
}

void RecordSession::release_held_expiries() {
  if (!next_release_) return;
  auto now = std::chrono::steady_clock::now();
  if (now >= *next_release_) {
    next_release_.reset();
    for (auto& [tid, t] : tasks_) {
      if (!t.held_sig) continue;
      if (now >= t.timer_free_at && t.put_off.empty()) {
        // As a put-off signal: on_signal gives it its first siginfo back when it arrives.
        put_off_signal(t, std::exchange(t.held_sig, 0), t.held_si);
        send_put_off(t);
        continue;
      }
      auto at = std::max(t.timer_free_at, now + std::chrono::milliseconds(1));
      if (!next_release_ || at < *next_release_) next_release_ = at;
    }
  }
  if (next_release_ && !periodic_ && !flush_armed_) {
    // No tick comes by itself: the one-shot timer (which also flushes the trace) wakes the
    // loop when the next expiry is due.
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(*next_release_ - now).count();
    set_tick_timer(std::max<long>(long(us), 100), 0);
    flush_armed_ = true;
  }
}

void RecordSession::deliver_fault(RecordTask& t, int sig, const SigInfo& si) {
  take_buffered(t);
  Event e = signal_event(t, sig, si);
  e.synchronous = true;
  deliver_and_write(t, e);
}

void RecordSession::deliver_and_write(RecordTask& t, Event& e) {
  if (t.tracer_passed_sig == e.signo) t.tracer_passed_sig = 0;  // delivered where it stood
  if (!signal_is_caught(t.tid, e.signo)) {
    write(e);  // no handler: the default action, no signal frame
    // One that ends the process ends its other threads where they stand (group_exit.cpp).
    if (default_action_ends(e.signo)) start_group_exit(t);
    t.resumed_from_signal_event = true;
    return resume_syscall(t, e.signo);
  }
  // A handler runs. The frame the kernel builds for it is not fully determined by the
  // program (its XSAVE area depends on which FPU state the CPU tracks as in use), so it is
  // recorded: single-stepping into the delivery stops at the handler's first instruction
  // with the frame in place (kernel/signal.c, signal_delivered).
  resume(t.tid, PTRACE_SINGLESTEP, e.signo);
  int st = wait_task(t.tid);
  if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP && (st >> 16) == 0) {
    uint64_t sp = get_regs(t.tid).rsp;
    constexpr uint64_t kRedZone = 128, kMaxFrame = 64 << 10, kAltFrame = 16 << 10;
    uint64_t end =
        e.regs.rsp > sp && e.regs.rsp - sp < kMaxFrame ? e.regs.rsp - kRedZone : sp + kAltFrame;
    MemoryRegion frame;
    frame.addr = sp;
    frame.bytes = read_memory(t.tid, sp, end - sp);
    e.memory.push_back(std::move(frame));
    write(e);
    if (std::exchange(t.step_into_handler, false)) {
      // Its tracer's single step with this signal ends here, as natively (the same stop:
      // SIGTRAP, si_code SIGTRAP), where replay's copy stands after this event.
      t.stop_follows_signal_event = true;
      return stop_for_tracer(t, SIGTRAP, TracerStop::Step);
    }
    return resume_syscall(t, 0);
  }
  write(e);
  t.step_into_handler = false;
  handle_stop(t, st);  // it ended, or stopped for another reason first
}

void RecordSession::note_desched_before_call(RecordTask& t, bool was_armed) {
  // Before its call, the counter armed for it (the library enabled it, then the task was
  // switched out), or right as the library's enabling ioctl returned (the flag not set yet):
  // turned off here, the call would wait unseen until its time slice ended.
  const Registers r = get_regs(t.tid);
  if (r.rip == RWD_UNTRACED_IP) {
    t.rearm_desched = false;  // the call is made (it returned, or waits: abort_waiting_call)
    return;
  }
  const bool enabling = r.rip == RWD_PRIVILEGED_UNTRACED_IP && r.orig_rax == SYS_ioctl &&
                        int64_t(r.rdi) == t.buffer.desched_fd && r.rsi == PERF_EVENT_IOC_ENABLE;
  if (was_armed || enabling) t.rearm_desched = true;
}

bool RecordSession::abort_waiting_call(RecordTask& t) {
  if (!t.buffer.addr) return false;
  Registers r = get_regs(t.tid);
  int64_t result = int64_t(r.rax);
  if (r.rip != RWD_UNTRACED_IP || !(is_restart_result(result) || result == -EINTR)) return false;
  // Not restarted: given up.
  give_up_buffered_call(t, r, int64_t(r.orig_rax));
  return true;
}

void RecordSession::give_up_buffered_call(RecordTask& t, Registers& r, int64_t nr) {
  // The call returns RWD_ABORTED to the library, which abandons its record (replay's library
  // finds the abort mark the task's next event carries) and makes the call traced.
  r.rax = uint64_t(int64_t(RWD_ABORTED));
  set_regs(t.tid, r);
  t.buffer.aborted_nr = nr;
  ++aborted_calls_;
}

void RecordSession::on_signal(RecordTask& t, int sig) {
  auto si = get_siginfo(t.tid);
  if (t.cpu_clock.is_slice_signal(sig, si)) {
    // Chaos mode's CPU-time slice ran out (task_cpu_clock.h): rewind's signal, never the
    // program's. The thread stopped for it in user code, as an interrupt stops it.
    const AddressSpace& g = space(t);
    if (t.state == RunState::UserRunning && g.turns->active == t.tid && !g.turns->ready.empty())
      return preempt(t);
    return resume_syscall(t, 0);
  }
  if (notify_signal_before_stub(t, sig, si)) return;
  bool desched = t.buffer.is_desched_signal(sig, si);
  // The counter would signal again at this very stop's context switch: off until the
  // library's next call that may block.
  const bool was_armed = desched && t.buffer.settle_desched(t.tid);
  if (desched) note_desched_before_call(t, was_armed);
  if (abort_waiting_call(t)) {
    if (!desched) {
      t.redeliver_sig = sig;
      t.redeliver_si = si;
    }
    return resume_syscall(t, 0);
  }
  // The counter's signal when the call did not wait (the task was switched out around it):
  // rewind's, not the program's. Switched out before the call, the counter goes on again
  // for it.
  if (desched) {
    if (t.rearm_desched && t.buffer.rearm_desched(t.tid)) t.rearm_desched = false;
    return resume_syscall(t, 0);
  }
  const bool deferred_by_int3 = t.deferred_byte >= 0;
  if (t.deferred_at && sig == SIGTRAP && t.deferred_byte >= 0 &&
      get_regs(t.tid).rip == t.deferred_at + 1) {
    // The int3 that stands in for the breakpoint below: the original byte goes back, and the
    // task stands before it.
    const uint8_t was = uint8_t(t.deferred_byte);
    write_memory(t.tid, t.deferred_at, &was, 1);
    t.deferred_byte = -1;
    Registers r = get_regs(t.tid);
    r.rip = t.deferred_at;
    set_regs(t.tid, r);
  }
  if (t.deferred_at && sig == SIGTRAP && get_regs(t.tid).rip == t.deferred_at) {
    // The string instruction is done (or the instruction the signal was put off past): send
    // the put-off signal again, to arrive here.
    if (!deferred_by_int3) clear_exec_breakpoint(t.tid);
    t.deferred_at = 0;
    send_put_off(t);
    return resume_syscall(t, 0);
  }
  if (sent_by_this_process(si)) {
    auto first = first_sent(t, sig);
    if (first != t.put_off.end()) {
      si = first->si;  // as it first arrived
      set_siginfo(t.tid, si);
      if (sig < SIGRTMIN)  // a standard signal sent again while one was pending: merged
        std::erase_if(t.put_off, [&](const PutOffSignal& p) { return p.sent && p.sig == sig; });
      else
        t.put_off.erase(first);
    }
  }
  if (sig == SIGSEGV && siginfo_code(si) == SI_KERNEL) {
    Registers regs = get_regs(t.tid);
    if (emulate_insn(t, regs)) return resume_syscall(t);
  }
  if (sig == SIGTRAP && siginfo_code(si) == TRAP_HWBKPT && dismiss_tracer_watch_hit(t))
    return resume_syscall(t, 0);
  if (t.tracer && sig == t.tracer_passed_sig) {
    t.tracer_passed_sig = 0;  // its tracer passed it on: delivered as it is
  } else if (t.tracer) {
    // Natively a traced task stops for its tracer at every signal but SIGKILL, ignored ones
    // too (kernel/signal.c sig_ignored).
    return stop_for_tracer(t, sig,
                           is_synchronous_fault(sig, si) ? TracerStop::Fault : TracerStop::Signal);
  }
  if (is_synchronous_fault(sig, si)) return deliver_fault(t, sig, si);
  if (signal_is_ignored(t.tid, sig)) {
    // No handler and the default action is to ignore: delivering it changes nothing (an
    // interrupted syscall restarts either way), so it is not part of the recording.
    return resume_syscall(t, 0);
  }
  if (hold_timer_expiry(t, sig, si)) return resume_syscall(t, 0);
  AddressSpace& g = space(t);
  if (g.turns->active == t.tid || (g.turns->active == 0 && !g.turns->held_for_write)) {
    activate(g, t);
    return deliver_signal(t, sig, si);
  }
  // Another task of its memory runs user code (or a write into it waits): the handler waits
  // for this task's turn, from a stop that is no event's.
  t.pending_sig = sig;
  t.state = RunState::Stopped;
  t.unrun_since_event = false;
  if (std::find(g.turns->ready.begin(), g.turns->ready.end(), t.tid) == g.turns->ready.end())
    g.turns->ready.push_back(t.tid);
}

}  // namespace rwd
