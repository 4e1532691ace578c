// The recorder's scheduler (record_session.h): which task of a memory runs user code
// (its turn), the tasks that wait in syscalls meanwhile (their entry events), time slices and
// the periodic tick that ends them, and the preemption points replay must find again.
#include <signal.h>
#include <sys/ptrace.h>

#include <algorithm>
#include <memory>

#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/record/record_session.h"
#include "engine/record/signal_disposition.h"
#include "engine/replay/point_trampoline.h"
#include "engine/ticks/dead_stack.h"
#include "engine/ticks/memory_digest.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

/// Ticks after which an unanswered PTRACE_INTERRUPT is sent again.
constexpr uint64_t kInterruptRetryTicks = 200;

/// True when the kernel has put the task to sleep (state S or D in /proc/TID/stat).
bool task_sleeping(pid_t tid) {
  char state = proc_task_state(tid);
  return state == 'S' || state == 'D';
}

}  // namespace

bool RecordSession::leave_turns(ThreadGroup& g, pid_t tid) {
  AddressSpace& s = *g.space;
  std::erase(g.members, tid);
  std::erase(s.tasks, tid);
  std::erase(s.turns->ready, tid);
  bool was_active = s.turns->active == tid;
  if (was_active) s.turns->active = 0;
  return was_active;
}

std::vector<AddressSpace*> RecordSession::spaces() {
  std::vector<AddressSpace*> all;
  for (auto& [pid, g] : groups_)
    if (std::find(all.begin(), all.end(), g.space.get()) == all.end()) all.push_back(g.space.get());
  return all;
}

size_t RecordSession::turn_task_count(const AddressSpace& s) {
  size_t n = 0;
  for (AddressSpace* sharing : spaces())
    if (sharing->turns == s.turns) n += sharing->tasks.size();
  return n;
}

std::vector<AddressSpace*> RecordSession::turn_takers() {
  std::vector<AddressSpace*> one_each;
  for (AddressSpace* s : spaces())
    if (std::none_of(one_each.begin(), one_each.end(),
                     [&](const AddressSpace* o) { return o->turns == s->turns; }))
      one_each.push_back(s);
  return one_each;
}

void RecordSession::take_new_space(RecordTask& t) {
  ThreadGroup& g = group(t);
  std::shared_ptr<AddressSpace> old = g.space;
  g.space = std::make_shared<AddressSpace>();
  g.space->tasks = {t.tid};
  std::erase(old->tasks, t.tid);
  std::erase(old->turns->ready, t.tid);
  if (old->turns->active == t.tid) {
    old->turns->active = 0;
    g.space->turns->active = t.tid;
    schedule(*old);  // the processes still sharing it go on without t's
  }
}

void RecordSession::on_tick() {
  if (!periodic_) {  // the one-shot flush timer
    flush_armed_ = false;
    writer_->flush();
    return;
  }
  ++ticks_;
  if (ticks_ - last_flush_tick_ >= kFlushAfterUs / policy_.tick_us()) {
    last_flush_tick_ = ticks_;
    writer_->flush();
  }
  end_slices();
  retry_tracer_interrupts();
  for (AddressSpace* s : turn_takers()) {
    AddressSpace& g = *s;
    if (!g.turns->active || !g.turns->others_wait()) continue;
    RecordTask& t = tasks_.at(g.turns->active);
    if (t.state == RunState::UserRunning && t.interrupt_requested &&
        ticks_ - t.interrupt_tick >= kInterruptRetryTicks) {
      // The interrupt's stop never came (seen once in 30 chaos recordings of a spinning
      // thread: the task ran on, unpreempted, forever). Ask again; a second stop is harmless.
      if (ptrace(PTRACE_INTERRUPT, t.tid, nullptr, nullptr) == 0) t.interrupt_tick = ticks_;
    } else if (t.state == RunState::InSyscall && !t.blocked && t.vfork_child == 0 &&
               task_sleeping(t.tid)) {
      // A syscall expected to return promptly is waiting: let the others run meanwhile.
      wait_outside_turns(t);
      schedule(g);
    }
  }
}

void RecordSession::end_slices() {
  for (AddressSpace* s : turn_takers()) {
    const AddressSpace& g = *s;
    if (!g.turns->active || !g.turns->others_wait()) continue;
    RecordTask& t = tasks_.at(g.turns->active);
    if (t.state == RunState::UserRunning && !t.interrupt_requested &&
        (slice_over(t) || g.turns->held_for_write) &&
        !(t.put_off_preemptions && t.put_off_tick == ticks_)) {
      // Time slice over and another task waits, or a write into this memory does: stop this
      // one where it is.
      if (ptrace(PTRACE_INTERRUPT, t.tid, nullptr, nullptr) == 0) {
        t.interrupt_requested = true;
        t.interrupt_tick = ticks_;
      }
    }
  }
}

void RecordSession::start_slice(RecordTask& t) {
  t.run_start = ticks_;
  t.slice = policy_.slice(space(t).point_cost_us);
  t.slice_ns = 0;
  if (!policy_.chaos() || !cpu_clocks_) return;
  if (!t.cpu_clock.is_open() && !t.cpu_clock.open(t.tid)) {
    cpu_clocks_ = false;  // refused once, refused for all: ticks measure every slice
    return;
  }
  uint64_t ns = policy_.slice_ns();
  // To the thread unless it blocks the signal (then it would only be pending there).
  uint64_t blocked = 0;
  bool to_thread = try_get_sigmask(t.tid, blocked) && !(blocked & (1ull << (kSliceSignal - 1)));
  if (t.cpu_clock.start(ns, to_thread)) t.slice_ns = ns;
}

bool RecordSession::slice_over(const RecordTask& t) const {
  // Whichever ends first: the ticks' slice still ends a wait in a buffered syscall (no CPU
  // time), and the CPU time's ends a short computation where ticks are coarse or late.
  return ticks_ - t.run_start >= t.slice || (t.slice_ns && t.cpu_clock.elapsed_ns() >= t.slice_ns);
}

void RecordSession::mark_entries(AddressSpace& s, pid_t except) {
  // Tasks waiting in a syscall while another runs: replay must bring them to the syscall's
  // entry before the other's next events, as their code up to it ran first. So for every
  // memory that takes turns with this one (Turns).
  for (AddressSpace* sharing : spaces()) {
    if (sharing->turns != s.turns) continue;
    for (pid_t m : sharing->tasks) {
      RecordTask& x = tasks_.at(m);
      if (m == except || x.state != RunState::InSyscall || !x.blocked || x.entry_marked) continue;
      mark_entry(x);
    }
  }
}

void RecordSession::mark_entry(RecordTask& t) {
  Event e;
  e.kind = EventKind::SyscallEntry;
  e.tid = t.tid;
  e.regs = t.entry;
  write(e);
  t.entry_marked = true;
}

void RecordSession::activate(AddressSpace& s, RecordTask& t) {
  // Before t runs user code, every task of its memory that waits in a syscall must be
  // brought to that syscall's entry in replay: its code up to there ran before t's.
  mark_entries(s, t.tid);
  s.turns->active = t.tid;
  t.unrun_since_event = false;
}

bool RecordSession::write_sched_event(RecordTask& t, const Registers& regs) {
  Event e;
  e.kind = EventKind::Sched;
  e.tid = t.tid;
  e.regs = regs;
  if (!set_point(e, t)) return false;
  take_buffered(t);
  write(e);
  return true;
}

bool RecordSession::set_point(Event& e, RecordTask& t) {
  // Buffers that syscalls in flight in other tasks may write are left out of the digest.
  // So are the syscall buffers' records and control words (replay fills them in ahead).
  // And so is the dead part of every task's stack (dead_stack.h): what lies there may differ.
  AddressSpace& s = space(t);
  auto started = std::chrono::steady_clock::now();
  e.exclusions = s.buffer_exclusions;
  std::vector<ProcMapping> maps = read_proc_maps(t.tid);
  for (pid_t m : s.tasks) {
    RecordTask& x = tasks_.at(m);
    std::optional<uint64_t> rsp;
    if (m == t.tid) {
      rsp = e.regs.rsp;
    } else if (x.state == RunState::InSyscall) {
      rsp = x.entry.rsp;
      if (const SyscallSpec* spec = syscall_spec(long(x.entry.orig_rax))) {
        auto ranges = possible_outputs(x.tid, *spec, x.entry, x.snap);
        e.exclusions.insert(e.exclusions.end(), ranges.begin(), ranges.end());
      }
    } else if (Registers r; !x.fresh && try_get_regs(x.tid, r)) {
      rsp = r.rsp;
    }
    if (rsp)
      if (auto dead = dead_stack(maps, *rsp)) e.exclusions.push_back(*dead);
  }
  e.digest = digest_memory(t.tid, maps, e.exclusions);
  e.stack_digest = digest_stack_window(t.tid, maps, e.exclusions, e.regs.rsp);
  e.register_digest = digest_register_windows(t.tid, maps, e.exclusions, e.regs);
  e.stack_words = point_stack_words(t.tid, maps, e.exclusions, e.regs.rsp);
  s.point_cost_us = uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::steady_clock::now() - started)
                                 .count());
  if (const char* f = getenv("REWIND_DEBUG_DIGEST")) {
    if (FILE* out = fopen(f, "a")) {
      fprintf(out, "record point (task %d)\n%s", t.tid, digest_report(t.tid).c_str());
      fclose(out);
    }
  }
  // A SIGKILL ends the ptrace stop of every thread before any of them exits (it is queued to
  // all under one lock, kernel/signal.c complete_signal), so a task still stopped now had no
  // dying thread change memory while the digest was taken.
  Registers now;
  return try_get_regs(t.tid, now);
}

void RecordSession::wait_outside_turns(RecordTask& t) {
  t.blocked = true;
  space(t).turns->active = 0;
}

void RecordSession::schedule(AddressSpace& g) {
  if (g.turns->active) return;
  if (g.turns->held_for_write) return start_held_write(g);  // none runs until the write's event
  if (g.turns->ready.empty()) return;
  size_t i = policy_.pick(g.turns->ready.size());
  pid_t next = g.turns->ready[i];
  g.turns->ready.erase(g.turns->ready.begin() + long(i));
  RecordTask& t = tasks_.at(next);
  activate(g, t);
  if (t.next_tracer_stop) {  // before it runs (exec_stops_for_tracer)
    const TracerStop kind = *std::exchange(t.next_tracer_stop, std::nullopt);
    // The syscall-exit-stop only where its tracer resumed it with PTRACE_SYSCALL.
    if (kind != TracerStop::SyscallExit) return stop_for_tracer(t, SIGTRAP, kind);
    if (syscall_stop_for_tracer(t, false)) return;
  }
  // Resumed from a syscall-enter-stop or a PTRACE_EVENT_EXIT stop: the call goes on.
  if (t.entry_reported || t.exit_reported) return on_syscall_entry(t);
  if (std::exchange(t.resume_inside_syscall, false)) {
    t.state = RunState::InSyscall;
    return resume_syscall(t);
  }
  if (t.pending_sig) {
    int sig = t.pending_sig;
    t.pending_sig = 0;
    const bool fault = std::exchange(t.pending_fault, false);
    if (t.tracer_step && !t.tracer_step_over_syscall) {
      // A single step with a signal (check_single_step): ignored, it is dropped and the step
      // runs the instruction; with a handler, the step ends at the handler's first
      // instruction (deliver_and_write), delivered where the tracee stands, at its event.
      if (signal_is_ignored(t.tid, sig)) return step_for_tracer(t);
      if (signal_is_caught(t.tid, sig)) {
        t.tracer_step = false;
        t.step_into_handler = true;
        if (fault) return deliver_fault(t, sig, get_siginfo(t.tid));
        Event e = signal_event(t, sig, get_siginfo(t.tid));
        if (!set_point(e, t)) return;  // killed: its exit comes next
        take_buffered(t);
        t.state = RunState::UserRunning;
        return deliver_and_write(t, e);
      }
      t.tracer_step = false;  // it ends the task
    }
    if (fault) return deliver_fault(t, sig, get_siginfo(t.tid));
    return deliver_signal(t, sig, get_siginfo(t.tid));
  }
  if (std::exchange(t.tracer_step, false) && !t.tracer_step_over_syscall) return step_for_tracer(t);
  run_user(t);
}

void RecordSession::preempt(RecordTask& t) {
  AddressSpace& g = space(t);
  Registers regs = get_regs(t.tid);
  if (rep_insn_at(t.tid, regs.rip) || t.buffer.must_not_stop_at(regs.rip))
    return resume_syscall(t);  // inside a string instruction: interrupt again next tick
  // In a short loop whose registers repeat at each pass: on to an instruction where they do
  // not (preemption_point.cpp), the first time it is interrupted here.
  if (t.put_off_preemptions == 0) {
    if (!step_to_distinct_point(t, regs)) return;  // another stop came, handled
    // Signals from outside that came during its steps (a debugger's SIGSTOP) were put off
    // (step_insn_putting_off): sent again now, they arrive when it runs next.
    send_put_off(t);
    if (rep_insn_at(t.tid, regs.rip) || t.buffer.must_not_stop_at(regs.rip))
      return resume_syscall(t);
  }
  // Where no trampoline fits (a call among the next bytes, a JIT's code), replay would stop
  // at every pass of the instruction since the task's last event: millions in a hot loop of
  // a long slice. Interrupt again next tick, somewhere else.
  if (t.put_off_preemptions < kMaxPutOffPreemptions && !point_trampoline_fits(t.tid, regs)) {
    // Stopped again where the last one was put off, the task has not run (an interrupt that
    // came before it was back on a CPU): that one does not count towards the limit.
    if (regs.rip != t.put_off_rip) ++t.put_off_preemptions;
    t.put_off_rip = regs.rip;
    ++put_off_preemptions_;
    t.put_off_tick = ticks_;  // not again before the next tick: the task must run meanwhile
    return resume_syscall(t);
  }
  t.put_off_preemptions = 0;
  t.put_off_rip = 0;
  if (!write_sched_event(t, regs)) return;  // killed: its exit comes next
  ++preemptions_;
  t.state = RunState::Stopped;
  t.unrun_since_event = true;
  g.turns->active = 0;
  g.turns->ready.push_back(t.tid);
  schedule(g);
}

}  // namespace rwd
