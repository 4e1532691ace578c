#include "engine/timeline/timeline.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "engine/arch/clone_args.h"
#include "engine/arch/insn.h"
#include "engine/arch/siginfo.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/replay/replay_observer.h"
#include "engine/replay/replay_session.h"
#include "engine/ticks/memory_digest.h"
#include "engine/timeline/breakpoints.h"
#include "engine/timeline/checkpoint_store.h"
#include "engine/timeline/timeline_run.h"
#include "engine/trace/buffered_records.h"

namespace rwd {

namespace {

constexpr uint64_t kSingleStepBit = 1ull << 14;  // DR6.BS
constexpr uint64_t kWatchBits = 0xe;             // DR6.B1-B3: the debugger's slots
constexpr uint64_t kTrapFlag = 0x100;            // rflags.TF

/// Thrown on the engine thread to abandon the current replay and start another.
struct Restart {};
/// Thrown on the engine thread when the timeline is destroyed.
struct Shutdown {};

/// What a reverse operation must do after a scan finished.
enum class After : uint8_t { None, ReverseContinue, ReverseStep };

}  // namespace

class Timeline::Engine : public ReplayObserver {
 public:
  explicit Engine(std::string dir) {
    opts_.trace_dir = std::move(dir);
    opts_.echo_output = false;
    opts_.on_output = [this](uint64_t event, OutputStream stream, const std::string& bytes) {
      if (event <= output_shown_) return;
      output_shown_ = event;
      std::lock_guard lock(listener_mu_);
      if (output_listener_) output_listener_(stream, bytes);
    };
    thread_ = std::thread([this] { main(); });
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return stopped_ || failed_; });
    if (failed_) {
      lock.unlock();
      thread_.join();
      throw Error(error_);
    }
  }

  ~Engine() {
    {
      std::lock_guard lock(mu_);
      shutdown_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  /// Runs `fn` on the engine thread while it is paused; returns when done.
  void call(std::function<void()> fn) {
    std::unique_lock lock(mu_);
    if (failed_) throw Error(error_);
    job_ = std::move(fn);
    job_done_ = false;
    cv_.notify_all();
    cv_.wait(lock, [&] { return job_done_ || failed_; });
    if (job_error_) {
      auto e = std::move(job_error_);
      std::rethrow_exception(e);
    }
    if (failed_ && !job_done_) throw Error(error_);
  }

  /// Starts operation `op` (it runs on the engine thread) and waits for the stop it ends at.
  StopInfo operate(std::function<void()> op) {
    std::unique_lock lock(mu_);
    if (failed_) throw Error(error_);
    stopped_ = false;
    job_ = std::move(op);
    job_done_ = false;
    resume_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return stopped_ || failed_; });
    if (failed_) throw Error(error_);
    return stop_;
  }

  StopInfo current() {
    std::lock_guard lock(mu_);
    return stop_;
  }

  // --- Operations (run on the engine thread, inside pause()). ---

  void op_forward() {
    interrupt_ = false;
    if (divert_resume(false)) return;
    run_ = Run{};
    run_.kind = Run::Forward;
  }

  void op_step(pid_t tid) {
    interrupt_ = false;
    if (divert_resume(true)) return;
    run_ = Run{};
    run_.kind = Run::StepInsn;
    run_.tid = tid;
  }

  void op_seek(uint64_t event) {
    end_diversion();
    Run r;
    r.kind = Run::Goto;
    r.target.kind = Point::Between;
    r.target.event = event;
    r.report.reason = StopReason::Seek;
    run_ = r;
    if (event <= session_->events_done()) throw Restart{};  // else: on from here, forwards
  }

  void op_reverse_continue(Timeline::WatchStop at) {
    interrupt_ = false;
    reverse_watch_stop_ = at;
    start_scan(After::ReverseContinue, false);
  }

  void op_reverse_step(pid_t tid) {
    end_diversion();
    step_tid_ = tid;
    if (here_.kind != Point::Entry || here_.tid != tid) {
      auto it = entry_pending_.find(tid);
      const ReplayTask* t = live(tid);
      if (it != entry_pending_.end() && t && t->at_entry) {
        // The task waits in a syscall it entered at an earlier event while others ran: it
        // stands at that entry (the same state), and steps back from there.
        Point entry;
        entry.kind = Point::Entry;
        entry.event = it->second;
        entry.tid = tid;
        here_ = entry;
      }
    }
    if (here_.kind == Point::Entry && here_.tid == tid) {
      // Before a syscall: the previous instruction ran between the last event and this one.
      start_scan(After::ReverseStep, true);
      return;
    }
    if (here_.kind == Point::Between && here_.event > 1) {
      const Event* last = &last_event_;
      if (last->kind == EventKind::Syscall && last->tid == tid) {
        // Just after a syscall: one instruction back is that syscall's entry.
        Run r;
        r.kind = Run::Goto;
        r.target = entry_of_last_syscall(tid, here_.event);
        r.report.reason = StopReason::Step;
        r.report.tid = tid;
        run_ = r;
        throw Restart{};
      }
      if (last->kind == EventKind::Signal && last->tid == tid) {
        // At a signal handler's first instruction: one instruction back is where the signal
        // arrived, in the run that led to the signal event.
        step_from_ = here_.event - 1;
      }
    }
    start_scan(After::ReverseStep, true);
  }

  // --- ReplayObserver. ---

  int before_resume(ReplayTask& t, int request) override {
    if (!bps_.empty() || lifted_) sync_breakpoints(t);
    sync_watchpoints(t);
    bool stepping = single_stepping(t);
    Registers r = get_regs(t.tid);
    resume_regs_ = r;
    if (bps_.patched(t.pid, r.rip) && bps_.has(t.pid, r.rip) &&
        !(last_pause_tid_ == t.rec_tid && last_pause_rip_ == r.rip &&
          last_pause_event_ == session_->events_done())) {
      // An event left the task on a breakpoint without executing it (a signal delivery
      // entered a handler there): that is a hit too, at the point "just after the event".
      // (A single step landing on one is not: the step already stopped there.)
      at_event_start_ = resumed_in_[t.rec_tid] != session_->events_done() + 1;
      if (at_event_start_) on_trap(t, r, true, 0);
      at_event_start_ = false;
    }
    resumed_in_[t.rec_tid] = session_->events_done() + 1;
    if (bps_.patched(t.pid, r.rip)) {
      // On a breakpoint: take it out for one instruction, then put it back.
      bps_.lift(t.pid, t.tid, r.rip);
      lifted_ = true;
      stepping_over_ = !stepping;
      stepped_ = true;
      return PTRACE_SYSEMU_SINGLESTEP;
    }
    stepping_over_ = false;
    stepped_ = stepping;
    return stepping ? PTRACE_SYSEMU_SINGLESTEP : request;
  }

  bool begin_code_patch(const ReplayTask& t, uint64_t addr, size_t len) override {
    // The patch moves instructions elsewhere: single steps, watchpoints (they report the
    // moved instruction's address) and breakpoints in the patched bytes need them in place.
    if (!watches_.empty() || lifted_ || single_stepping(t) || rep_step_tid_) return false;
    for (uint64_t a = addr; a < addr + len; ++a)
      if (bps_.has(t.pid, a)) return false;
    code_patched_ = true;
    return true;
  }

  void end_code_patch() override { code_patched_ = false; }

  /// True when the instruction at `rip` of `t` is `int1` (icebp, 0xf1), whose trap has no
  /// cause in DR6 either.
  static bool icebp_at(const ReplayTask& t, uint64_t rip) {
    auto code = rwd::read_memory(t.tid, rip, 1);
    return code.size() == 1 && code[0] == 0xf1;
  }

  /// Whether `t`'s next resume is a single step: a stepi of it, a counted step of a reverse
  /// step, or a step through a rep-prefixed string instruction.
  bool single_stepping(const ReplayTask& t) const {
    return (run_.kind == Run::StepInsn && t.rec_tid == run_.tid) || counting_steps(t) ||
           (rep_step_tid_ && *rep_step_tid_ == t.rec_tid);
  }

  /// Whether the steps of `t` count now, for a reverse step's scan or its run to the
  /// instruction before (Run::pos).
  bool counting_steps(const ReplayTask& t) const {
    if (!((run_.kind == Run::Scan && run_.count_steps) || run_.kind == Run::Steps) ||
        t.rec_tid != run_.tid || session_->events_done() != run_.event)
      return false;
    if (run_.after_hit) return run_.hits >= run_.after_hit;
    return run_.pos == 0 || paused_at_pos_;
  }

  /// True once after interrupt() was called during a user-visible forward run. A backward
  /// operation ends in a second replay whose stop must be exact: a reverse continue is cut
  /// short only between its scans (interrupt_reverse_continue), other ones not at all.
  bool take_interrupt() {
    if (run_.kind != Run::Forward && run_.kind != Run::StepInsn) return false;
    return interrupt_.exchange(false);
  }

  void pause_interrupted(const Point& here) {
    StopInfo si;
    si.reason = StopReason::Interrupted;
    pause(si, here);
  }

  bool after_stop(ReplayTask& t, const Stop& s) override {
    if (debug_ && s.kind != Stop::Exited)
      fprintf(stderr,
              "rewind: timeline: stop kind %d sig %d at %llx (events done %llu, stepped %d)\n",
              int(s.kind), s.sig, (unsigned long long)get_regs(t.tid).rip,
              (unsigned long long)session_->events_done(), int(stepped_));
    if (lifted_ && s.kind != Stop::Exited && s.kind != Stop::SyscallEntry) {
      lifted_ = false;
      bps_.sync(t.pid, t.tid);
    }
    // At a syscall entry the lifted breakpoint stays out until the next resume: the replay
    // may run the syscall again from its instruction (mmap, fork, exit: RemoteSyscall), which
    // must not meet an int3 there.
    if (s.kind != Stop::Signal) stepping_over_ = false;
    if (s.kind == Stop::Exited) return false;
    if (s.kind == Stop::BufferPause) {
      on_buffer_pause(t, uint32_t(s.status));
      return true;
    }
    if (s.kind != Stop::SyscallEntry && !code_patched_ && take_interrupt())
      pause_interrupted(trap_point(t, get_regs(t.tid)));
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
      on_entry(t);
      return false;
    }
    if (s.kind != Stop::Signal) return false;
    if (s.sig != SIGTRAP) {
      on_signal(t, s.sig);
      return false;
    }
    uint64_t dr6 = take_debug_status(t.tid);
    if (dr6 & 1) return false;  // the replay's own breakpoint (reaching a recorded point)
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
    if (code == SI_KERNEL && bps_.patched(t.pid, r.rip - 1)) {
      r.rip -= 1;  // back onto the breakpoint's instruction
      set_regs(t.tid, r);
      on_trap(t, r, true, dr6);
      return true;
    }
    if (dr6 & (kSingleStepBit | kWatchBits)) {
      if ((dr6 & kWatchBits) == 0 && registers_equal(r, resume_regs_)) {
        // A step trap before any instruction ran: the kernel reports one when a task resumed
        // from a syscall stop with a single step. Not a step: go on.
        return true;
      }
      if ((dr6 & kWatchBits) == 0 && stepping_over_) {
        stepping_over_ = false;
        // Stepped over a breakpoint for a continue: nothing to report, unless the step
        // landed on another breakpoint (a `ret` onto a breakpointed return address). That
        // one is hit now: the next resume steps over it without looking.
        if (bps_.patched(t.pid, r.rip)) on_trap(t, r, true, 0);
        return true;
      }
      stepping_over_ = false;
      on_trap(t, r, false, dr6);
      return true;
    }
    return false;  // the program's own SIGTRAP, as recorded
  }

 private:
  // --- The engine thread. ---

  void main() {
    set_replay_observer(this);
    Run first;
    first.kind = Run::Goto;
    first.target.kind = Point::Between;
    first.target.event = 1;
    first.report.reason = StopReason::TraceStart;
    run_ = first;
    for (;;) {
      try {
        replay();
      } catch (const Restart&) {
      } catch (const Shutdown&) {
        end_diversion();
        checkpoints_.clear();
        session_.reset();
        return;
      } catch (const std::exception& e) {
        session_.reset();
        std::lock_guard lock(mu_);
        failed_ = true;
        error_ = e.what();
        cv_.notify_all();
        return;
      }
    }
  }

  void replay() {
    session_.reset();
    bps_.forget_all();
    lifted_ = false;
    for (auto& w : watches_) w.last.clear();
    watches_armed_.clear();  // new tasks: nothing armed
    run_.hits = 0;
    run_.steps = 0;
    paused_at_pos_ = false;
    resumed_in_.clear();
    rep_step_tid_.reset();
    const Saved* from = start_for(run_);
    run_.start_event = from ? from->event : 0;
    if (debug_)
      fprintf(stderr, "rewind: timeline: replay (run %d) from event %llu (%zu checkpoints)\n",
              int(run_.kind), (unsigned long long)run_.start_event, checkpoints_.size());
    session_ = from ? std::make_unique<ReplaySession>(opts_, *from->checkpoint)
                    : std::make_unique<ReplaySession>(opts_);
    entry_pending_.clear();
    last_entry_event_ = 0;
    if (run_.pos > 0) session_->pause_in_buffer(run_.tid, run_.event + 1, run_.pos);
    if (from) {
      last_event_ = from->last_event;
      entry_pending_ = from->entry_pending;
      last_entry_event_ = from->last_entry_event;
      checkpoints_.restart_clock();
      on_between();
    }
    while (const Event* e = session_->next_event()) {
      replaying_ = *e;
      bool was_exec = e->kind == EventKind::Exec;
      session_->step();
      last_event_ = replaying_;
      note_entries(last_event_);
      if (was_exec || changes_mappings(last_event_)) {
        for (auto& [rec, t] : session_->tasks()) {
          if (rec != last_event_.tid || t.state == TaskState::Exited) continue;
          if (was_exec) {
            bps_.forget(t.pid);
            watches_armed_.erase(t.tid);  // exec clears the debug registers
          } else
            bps_.revalidate(t.pid, t.tid);
        }
      }
      if (last_event_.kind == EventKind::Syscall && last_event_.child_tid) {
        // A fork's child is a copy of its parent, breakpoint patches included: the table
        // must know them, or it would take a patch for the original byte.
        auto parent = session_->tasks().find(last_event_.tid);
        auto child = session_->tasks().find(last_event_.child_tid);
        if (parent != session_->tasks().end() && child != session_->tasks().end() &&
            child->second.pid != parent->second.pid) {
          if (shares_memory(last_event_, parent->second.tid))
            bps_.share(child->second.pid, parent->second.pid);  // until it execs
          else
            bps_.copy_patches(parent->second.pid, child->second.pid);
        }
      }
      maybe_checkpoint();
      on_between();
    }
    on_end();
  }

  /// Keeps entry_pending_ and last_entry_event_ up to date after event `e`.
  void note_entries(const Event& e) {
    last_entry_event_ = 0;
    if (e.kind == EventKind::SyscallEntry) {
      entry_pending_[e.tid] = e.number;
    } else if (e.kind == EventKind::Syscall || e.kind == EventKind::Exit) {
      auto it = entry_pending_.find(e.tid);
      if (it == entry_pending_.end()) return;
      if (e.kind == EventKind::Syscall) last_entry_event_ = it->second;
      entry_pending_.erase(it);
    }
  }

  /// The entry point of the syscall that last_event_ (a Syscall of `tid`, event `n`)
  /// completed: at the SyscallEntry event that brought the task there, if any.
  Point entry_of_last_syscall(pid_t tid, uint64_t n) const {
    Point p;
    p.kind = Point::Entry;
    p.event = last_entry_event_ ? last_entry_event_ : n;
    p.tid = tid;
    return p;
  }

  // --- Checkpoints (policy: checkpoint_store.h). ---

  using Saved = CheckpointStore::Saved;

  /// Takes a checkpoint after the current event when one is due, or when asked (`requested`:
  /// kept until the timeline ends). Returns whether one exists here.
  bool maybe_checkpoint(bool requested = false) {
    uint64_t n = session_->events_done();
    if (Saved* here = checkpoints_.at(n)) {
      here->pinned |= requested;
      return true;
    }
    if (!requested && !checkpoints_.due(n)) return false;
    // The copy must not carry breakpoint patches: take them out of the process first.
    for (auto& [rec, t] : session_->tasks())
      if (t.state != TaskState::Exited) bps_.unpatch(t.pid, t.tid);
    auto c = session_->checkpoint();
    if (!c) {  // threads or several processes: no checkpoint
      checkpoints_.restart_clock();
      return false;
    }
    Saved s;
    s.event = n;
    s.pinned = requested;
    s.checkpoint = std::move(c);
    s.last_event = last_event_;
    s.entry_pending = entry_pending_;
    s.last_entry_event = last_entry_event_;
    checkpoints_.add(std::move(s), run_.start_event);
    return true;
  }

 public:
  /// A checkpoint at the current point on request: only just after an event.
  bool request_checkpoint() {
    if (here_.kind != Point::Between || here_.event != session_->events_done()) return false;
    return maybe_checkpoint(true);
  }

 private:
  /// The checkpoint a new replay for `run` starts from (nullptr: the trace's start).
  const Saved* start_for(const Run& run) const {
    // Steps counted after a hit count hits from the checkpoint the hit was counted from.
    if (run.after_hit) return checkpoints_.at(run.start_event);
    uint64_t limit = 0;
    switch (run.kind) {
      case Run::Forward:
      case Run::StepInsn:
        return nullptr;
      case Run::Goto:
      case Run::Scan:
        limit = run.target.kind == Point::Entry ? run.target.event - 1 : run.target.event;
        if (run.kind == Run::Scan && run.count_steps) limit = std::min(limit, run.event);
        if (run.kind == Run::Scan && run.below) limit = std::min(limit, run.below - 1);
        return checkpoints_.latest_at_most(limit);
      case Run::HitNumber:
        return checkpoints_.at(run.start_event);
      case Run::Steps:
        return checkpoints_.latest_at_most(run.event);
    }
    return nullptr;
  }

  /// True when every replayed task has ended.
  bool no_live_task() const {
    for (const auto& [rec, t] : session_->tasks())
      if (t.state != TaskState::Exited) return false;
    return true;
  }

  /// The task replaying `rec_tid` now, or nullptr.
  const ReplayTask* live(pid_t rec_tid) const {
    auto it = session_->tasks().find(rec_tid);
    return it == session_->tasks().end() || it->second.state == TaskState::Exited ? nullptr
                                                                                  : &it->second;
  }

  void on_between() {
    uint64_t n = session_->events_done();
    Point here;
    here.kind = Point::Between;
    here.event = n;
    if (take_interrupt()) return pause_interrupted(here);
    if (run_.kind == Run::Scan && after_ == After::ReverseContinue && run_.below &&
        interrupt_.exchange(false))
      return interrupt_reverse_continue();
    switch (run_.kind) {
      case Run::Forward:
        if (stop_at_code_mappings_ && maps_code(last_event_)) {
          StopInfo si;
          si.reason = StopReason::CodeMapped;
          si.tid = last_event_.tid;
          return pause(si, here);
        }
        return;
      case Run::StepInsn:
        if (last_event_.tid == run_.tid && consumes_instruction(last_event_)) {
          StopInfo si;
          si.reason = StopReason::Step;
          si.tid = run_.tid;
          return pause(si, here);
        }
        return;
      case Run::Goto:
        if (reached(run_.target, here)) {
          // A seek to the event that ended the last task (one killed by a signal: an exit
          // stops at its entry, on_entry) is at the end of the trace.
          StopInfo si = run_.report;
          if (si.reason == StopReason::Seek && no_live_task()) si.reason = StopReason::TraceEnd;
          return pause(si, here);
        }
        return;
      case Run::Scan:
        if (reached(run_.target, here)) return scan_done();
        return;
      case Run::HitNumber:
        return;
      case Run::Steps:
        if (n == run_.event && run_.count == 0) {
          StopInfo si = run_.report;
          return pause(si, here);
        }
        return;
    }
  }

  void on_entry(ReplayTask& t) {
    uint64_t next = session_->events_done() + 1;
    Point here;
    here.kind = Point::Entry;
    here.event = next;
    here.tid = t.rec_tid;
    Registers r = get_regs(t.tid);
    bool ending = syscall_has(long(r.orig_rax), kExit) && session_->tasks().size() == 1;
    // The end of the trace is the last task at its exit, still inspectable: where forward
    // runs stop, and seeks to any later event (the exit's own, its task's end).
    bool seek_past = run_.kind == Run::Goto && run_.report.reason == StopReason::Seek &&
                     !reached(run_.target, here) && run_.target.event >= next;
    if (ending && (run_.kind == Run::Forward || run_.kind == Run::StepInsn || seek_past)) {
      StopInfo si;
      si.reason = StopReason::TraceEnd;
      si.tid = t.rec_tid;
      pause(si, here);
      // Nothing lies beyond: every forward operation ends here again.
      for (;;) {
        if (run_.kind != Run::Forward && run_.kind != Run::StepInsn) throw Restart{};
        pause(si, here);
      }
    }
    switch (run_.kind) {
      case Run::Forward:
      case Run::StepInsn:
        return;
      case Run::Goto:
        if (reached(run_.target, here)) pause(run_.report, here);
        return;
      case Run::Scan:
        if (counting_steps(t)) ++run_.steps;
        if (reached(run_.target, here)) scan_done();
        return;
      case Run::Steps:
        if (counting_steps(t) && run_.count > 0 && --run_.count == 0) pause(run_.report, here);
        return;
      case Run::HitNumber:
        return;
    }
  }

  void on_signal(ReplayTask& t, int sig) {
    // A recorded signal about to be delivered: the point a forward run stopped at for it (a
    // reverse step from there scans to it; a seek back goes to it). Only the timeline's own
    // traps show it otherwise, and the replay reaches it with its own breakpoint.
    if ((run_.kind == Run::Scan || run_.kind == Run::Goto) &&
        replaying_.kind == EventKind::Signal && replaying_.signo == sig &&
        replaying_.tid == t.rec_tid && run_.target.kind == Point::Trap &&
        reached(run_.target, trap_point(t, get_regs(t.tid)))) {
      if (run_.kind == Run::Scan) return scan_done();
      return pause(run_.report, trap_point(t, get_regs(t.tid)));
    }
    // The arrival of a signal moves the task like an instruction (to its handler, or to its
    // end): reverse steps count it.
    if (run_.kind == Run::Scan && counting_steps(t)) ++run_.steps;
    if (run_.kind == Run::Steps && counting_steps(t) && run_.count > 0) --run_.count;
    if (run_.kind != Run::Forward && run_.kind != Run::StepInsn) return;
    // Only the recorded signal itself; the replay's own traps (emulated rdtsc) are not stops.
    if (replaying_.kind != EventKind::Signal || replaying_.signo != sig ||
        replaying_.tid != t.rec_tid)
      return;
    Point here = trap_point(t, get_regs(t.tid));
    // A signal that ends the process (the trace's next event is this task killed by it):
    // nothing after it can be inspected, so this is also the end of the trace, and forward
    // operations stay here.
    const Event* next = session_->next_event();
    bool fatal = next && next->kind == EventKind::Exit && next->tid == t.rec_tid &&
                 WIFSIGNALED(next->status) && WTERMSIG(next->status) == sig;
    StopInfo si;
    si.reason = StopReason::Signal;
    si.tid = t.rec_tid;
    si.signo = sig;
    si.fatal = fatal;
    pause(si, here);
    if (!fatal) return;
    si.reason = StopReason::TraceEnd;
    for (;;) {
      if (run_.kind != Run::Forward && run_.kind != Run::StepInsn) throw Restart{};
      pause(si, here);
    }
  }

  /// A trap the debugger caused: a breakpoint (rip at it), a watchpoint or a single step.
  void on_trap(ReplayTask& t, const Registers& r, bool breakpoint, uint64_t dr6) {
    StopInfo si;
    si.tid = t.rec_tid;
    bool user_hit = false;
    if (breakpoint && bps_.has(t.pid, r.rip)) {
      si.reason = StopReason::Breakpoint;
      si.addr = r.rip;
      user_hit = true;
    }
    for (auto& w : watches_) {
      if (!(dr6 & (1ull << w.slot))) continue;
      si.reason = StopReason::Watchpoint;
      si.addr = w.addr;
      si.old_value = w.last;
      si.new_value = rwd::read_memory(t.tid, w.addr, size_t(w.len));
      w.last = si.new_value;
      user_hit = true;
    }
    bool stepped = (dr6 & kSingleStepBit) != 0;
    switch (run_.kind) {
      case Run::Forward:
        if (user_hit) pause(si, trap_point(t, r));
        return;
      case Run::StepInsn:
        if (user_hit || (stepped && t.rec_tid == run_.tid)) {
          if (!user_hit) si.reason = StopReason::Step;
          pause(si, trap_point(t, r));
        }
        return;
      case Run::Goto:
        if (session_->events_done() == run_.target.event && run_.target.kind == Point::Trap &&
            t.rec_tid == run_.target.tid && reached(run_.target, trap_point(t, r))) {
          rep_step_tid_.reset();
          pause(run_.report, trap_point(t, r));
        }
        follow_rep_target(t, r);
        return;
      case Run::Scan: {
        if (debug_ && r.rip == run_.target.regs.rip)
          fprintf(
              stderr, "rewind: timeline: scan trap at the target's rip, event %llu (target %llu)\n",
              (unsigned long long)session_->events_done(), (unsigned long long)run_.target.event);
        if (stepped && counting_steps(t)) ++run_.steps;
        if (session_->events_done() == run_.target.event && run_.target.kind == Point::Trap &&
            t.rec_tid == run_.target.tid && reached(run_.target, trap_point(t, r))) {
          // A write that trapped here happened before now: it counts, unless the reverse run
          // stops after writes (that stop is now). A breakpoint here is now, not before.
          if (si.reason == StopReason::Watchpoint && !run_.after_write) {
            ++run_.hits;
            si.event = session_->events_done();
            run_.last_hit_info = si;
          }
          rep_step_tid_.reset();
          return scan_done();
        }
        follow_rep_target(t, r);
        if (user_hit) {
          ++run_.hits;
          si.event = session_->events_done();
          run_.last_hit_info = si;
        }
        return;
      }
      case Run::HitNumber:
        if (!user_hit) return;
        if (++run_.hits < run_.count) {
          si.event = session_->events_done();
          run_.last_hit_info = si;
          return;
        }
        if (run_.hits == run_.count) {
          if (si.reason == StopReason::Watchpoint && !run_.after_write) {
            // The trap comes after the write; a backward user stops before it (as gdb
            // expects in reverse): one instruction back, reporting this write. When the hit
            // before was this task's write in the same run between events, the steps count
            // from there (a loop's previous write), else from the task's last event.
            const auto& prev = run_.last_hit_info;
            bool from_prev = prev && prev->reason == StopReason::Watchpoint &&
                             prev->tid == t.rec_tid && prev->event == session_->events_done();
            final_report_ = si;
            here_ = trap_point(t, r);
            step_tid_ = t.rec_tid;
            start_scan(After::ReverseStep, true, from_prev ? run_.count - 1 : 0);
          }
          pause(si, trap_point(t, r));
        }
        return;
      case Run::Steps: {
        if (debug_)
          fprintf(stderr, "rewind: timeline: steps run trap at %llx, stepped %d, left %llu\n",
                  (unsigned long long)r.rip, int(stepped), (unsigned long long)run_.count);
        // Counted as the scan counted them: this trap's step before its hit.
        bool counting = stepped && counting_steps(t);
        if (user_hit) ++run_.hits;
        if (counting && run_.count > 0 && --run_.count == 0) pause(run_.report, trap_point(t, r));
        // No step at all: the point is the hit the steps start after.
        if (run_.after_hit && run_.count == 0 && user_hit && run_.hits == run_.after_hit &&
            t.rec_tid == run_.tid && session_->events_done() == run_.event)
          pause(run_.report, trap_point(t, r));
        return;
      }
    }
  }

  /// `t` paused where its next step makes it use `pos` bytes of its buffered syscall records
  /// (the replay asked for it: Run::pos). From here its steps count. No point lies between
  /// the records used before and here, so no scan target is here.
  /// (after_stop has put a lifted breakpoint back already.)
  void on_buffer_pause(const ReplayTask& t, uint32_t pos) {
    if (t.rec_tid == run_.tid && session_->events_done() == run_.event && pos == run_.pos)
      paused_at_pos_ = true;
  }

  /// A target point can lie inside a repeated string instruction (`rep stos` stopped by a
  /// watchpoint or a step after some iterations): a breakpoint on its rip fires only before
  /// the first iteration. At the target's rip with other registers, single-step that task
  /// iteration by iteration until the target is reached or the instruction is done.
  void follow_rep_target(const ReplayTask& t, const Registers& r) {
    if (run_.target.kind != Point::Trap || t.rec_tid != run_.target.tid ||
        session_->events_done() != run_.target.event || r.rip != run_.target.regs.rip) {
      if (rep_step_tid_ && *rep_step_tid_ == t.rec_tid) rep_step_tid_.reset();
      return;
    }
    auto code = rwd::read_memory(t.tid, r.rip, 16);
    bps_.hide(t.pid, r.rip, code);  // the breakpoint on the target's rip
    if (rep_string_insn_length(code.data(), code.size()) > 0) rep_step_tid_ = t.rec_tid;
  }

  void on_end() {
    Point here;
    here.kind = Point::Between;
    here.event = session_->events_done();
    if (run_.kind == Run::Scan) return scan_done();  // the target was the end
    StopInfo si;
    si.reason = StopReason::TraceEnd;
    si.tid = last_event_.tid;
    for (;;) {
      pause(si, here);
      if (run_.kind != Run::Forward && run_.kind != Run::StepInsn) throw Restart{};
    }
  }

  /// Whether event `e` may have replaced mapped pages (and so patched breakpoints).
  static bool changes_mappings(const Event& e) {
    return e.kind == EventKind::Syscall && syscall_has(e.syscallno(), kChangesMappings);
  }

  /// Whether the process-creating syscall `e` (by task `tid`, stopped just after it) gave
  /// the child the parent's memory rather than a copy (vfork, CLONE_VM).
  static bool shares_memory(const Event& e, pid_t tid) {
    try {
      return decode_clone_args(tid, e.regs).shares_memory();
    } catch (const Error&) {  // clone3's arguments gone from memory: a copy, as fork makes
      return false;
    }
  }

  /// Whether event `e` mapped executable code (see Timeline::set_stop_at_code_mappings).
  static bool maps_code(const Event& e) {
    if (e.kind == EventKind::Exec) return true;
    if (e.kind != EventKind::Syscall || (e.result < 0 && e.result > -4096)) return false;
    return syscall_has(e.syscallno(), kMapsCode) && (e.regs.rdx & PROT_EXEC);
  }

  /// Whether event `e` moved its task as one step does: a syscall or an emulated rdtsc
  /// (an instruction), or a signal's delivery (to its handler's first instruction, where a
  /// step stops as in gdb; a fatal one ends the trace first, on_signal).
  static bool consumes_instruction(const Event& e) {
    return e.kind == EventKind::Syscall || e.kind == EventKind::Rdtsc ||
           e.kind == EventKind::Signal;
  }

  Point trap_point(const ReplayTask& t, const Registers& r) {
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
    return p;
  }

  /// True if `at` (digest not yet taken) is `target`.
  bool reached(const Point& target, const Point& at) {
    if (target.kind != at.kind || target.event != at.event) return false;
    if (target.kind == Point::Between) return true;
    if (target.tid != at.tid) return false;
    if (target.kind == Point::Entry) return true;
    if (target.regs.rip != at.regs.rip) return false;
    if (auto d = first_register_difference(target.regs, at.regs)) {
      if (debug_) fprintf(stderr, "rewind: timeline: at the target's rip, but %s\n", d->c_str());
      return false;
    }
    const ReplayTask* t = live(at.tid);
    bool same = t && digest_memory(t->tid) == target.digest;
    if (debug_ && !same)
      fprintf(stderr, "rewind: timeline: at the target's registers, memory differs\n");
    return same;
  }

  /// The code site of `addr` in process `pid` now (its address when the maps are gone).
  static CodeSite site_in(pid_t pid, uint64_t addr) {
    try {
      return rwd::code_site(read_proc_maps(pid), addr);
    } catch (const Error&) {
      return CodeSite{"", addr};
    }
  }

  /// Bytes of buffered syscall records task `rec_tid` has used since its last event (0: none,
  /// or its library cannot pause there: ReplaySession::can_pause_buffer).
  uint32_t buffer_pos(pid_t rec_tid) const {
    const ReplayTask* t = live(rec_tid);
    if (!t || !t->syscall_buffer || !session_->can_pause_buffer(rec_tid)) return 0;
    uint32_t pos = 0;
    read_memory_exact(t->tid, t->syscall_buffer, &pos, sizeof pos);
    return pos;
  }

  /// Starts a scan from the trace's start to the current point, then continues `after`.
  /// With count_steps, `after_hit` (not 0) makes the steps count once the current run's
  /// hit number `after_hit` is passed (Run::after_hit), replaying from the same checkpoint.
  void start_scan(After after, bool count_steps, uint64_t after_hit = 0) {
    if (debug_)
      fprintf(stderr, "rewind: timeline: scan to point kind %d event %llu rip %llx\n",
              int(here_.kind), (unsigned long long)here_.event, (unsigned long long)here_.regs.rip);
    Run r;
    r.kind = Run::Scan;
    r.target = here_;
    r.after_write =
        after == After::ReverseContinue && reverse_watch_stop_ == Timeline::WatchStop::AfterWrite;
    if (here_.kind == Point::Trap) {
      const ReplayTask* t = live(here_.tid);
      if (!t) throw Error("the current task is gone");
      r.target.digest = digest_memory(t->tid);
      // A counting scan single-steps the task from where the target can first be, checking
      // each step; a breakpoint would only stop it at every earlier pass (thousands, in a
      // loop making buffered syscalls).
      if (!count_steps) {
        internal_bp_ = site_in(t->pid, here_.regs.rip);
        bps_.add_internal(*internal_bp_);
      }
    }
    if (count_steps) {
      r.count_steps = true;
      r.tid = step_tid_;
      r.event = here_.kind == Point::Entry ? here_.event - 1 : here_.event;
      if (step_from_) {
        // Back from a signal's handler into the run before the signal event, which used all
        // of that event's buffered records.
        r.event = *std::exchange(step_from_, std::nullopt);
        if (session_->can_pause_buffer(r.tid)) r.pos = buffered_bytes_used(last_event_.buffered);
      } else if (after_hit) {
        r.after_hit = after_hit;
        r.start_event = run_.start_event;
      } else if (here_.kind != Point::Between) {
        r.pos = buffer_pos(r.tid);
      }
    }
    after_ = after;
    run_ = r;
    throw Restart{};
  }

  /// interrupt() during a reverse continue, in a scan that looks further back than the last
  /// one: that scan found no hit after event `below` (where it started), so the run stops
  /// there, as if it had run backwards that far. (During the first scan, the interrupt waits
  /// for it to end: before that, no point before the current one is known to be hit-free.)
  void interrupt_reverse_continue() {
    if (internal_bp_) {
      bps_.remove_internal(*internal_bp_);
      internal_bp_.reset();
    }
    Run next;
    next.kind = Run::Goto;
    next.target.kind = Point::Between;
    next.target.event = run_.below;
    next.report.reason = StopReason::Interrupted;
    after_ = After::None;
    run_ = next;
    throw Restart{};
  }

  /// The scan reached the current point: choose where to go, and go (a new replay).
  void scan_done() {
    Run done = run_;
    std::optional<CodeSite> internal = internal_bp_;
    if (debug_)
      fprintf(stderr, "rewind: timeline: scan reached event %llu: %llu hits, %llu steps\n",
              (unsigned long long)session_->events_done(), (unsigned long long)done.hits,
              (unsigned long long)done.steps);
    if (internal_bp_) {
      bps_.remove_internal(*internal_bp_);
      internal_bp_.reset();
    }
    Run next;
    if (after_ == After::ReverseContinue && done.hits == 0 && done.start_event > 0) {
      // No hit between the checkpoint and now: look further back.
      Run again = done;
      again.below = done.start_event;
      again.hits = 0;
      again.last_hit_info.reset();
      if (internal) {  // the same target: the same site
        internal_bp_ = internal;
        bps_.add_internal(*internal);
      }
      run_ = again;
      throw Restart{};
    }
    if (after_ == After::ReverseContinue) {
      if (done.hits == 0) {
        next.kind = Run::Goto;
        next.target.kind = Point::Between;
        next.target.event = 1;
        next.report.reason = StopReason::TraceStart;
      } else {
        next.kind = Run::HitNumber;
        next.after_write = done.after_write;
        next.count = done.hits;
        next.report = *done.last_hit_info;
        next.start_event = done.start_event;
      }
    } else {  // ReverseStep: single-step to one instruction before the current point
      if (done.steps == 0 && last_event_.kind == EventKind::Syscall &&
          last_event_.tid == done.tid && last_event_.number == done.event && done.event > 1) {
        // Nothing ran between the task's syscall and the target (a signal delivered as the
        // syscall returned): one instruction back is that syscall's entry.
        next.kind = Run::Goto;
        next.target = entry_of_last_syscall(done.tid, done.event);
        next.report.reason = StopReason::Step;
        next.report.tid = done.tid;
      } else if (done.steps == 0 && last_event_.kind == EventKind::Signal &&
                 last_event_.tid == done.tid && last_event_.number == done.event &&
                 done.event > 1) {
        // At a signal handler's first instruction, reached by a step: one instruction back is
        // where the signal arrived, in the run before the signal event (op_reverse_step does
        // the same from the point just after that event).
        Run again;
        again.kind = Run::Scan;
        again.count_steps = true;
        again.tid = done.tid;
        again.event = done.event - 1;
        again.target.kind = Point::Between;
        again.target.event = done.event;
        if (session_->can_pause_buffer(done.tid))
          again.pos = buffered_bytes_used(last_event_.buffered);
        run_ = again;  // after_ stays ReverseStep
        throw Restart{};
      } else if (done.steps == 0) {
        next.kind = Run::Goto;
        next.target.kind = Point::Between;
        next.target.event = done.event;
        next.report.reason = done.event <= 1 ? StopReason::TraceStart : StopReason::Step;
        next.report.tid = done.tid;
      } else {
        next.kind = Run::Steps;
        next.tid = done.tid;
        next.event = done.event;
        next.pos = done.pos;
        next.after_hit = done.after_hit;
        next.start_event = done.start_event;
        next.count = done.steps - 1;
        next.report.reason = StopReason::Step;
        next.report.tid = done.tid;
      }
      if (final_report_) next.report = *std::exchange(final_report_, std::nullopt);
    }
    after_ = After::None;
    run_ = next;
    throw Restart{};
  }

  void sync_breakpoints(const ReplayTask& t) { bps_.sync(t.pid, t.tid); }

  /// Arms the debug-register slots of `t` for the current watchpoints. Called before every
  /// resume, so it touches the registers (four ptrace calls a slot) only when the set of
  /// watchpoints changed since this task was last armed.
  void sync_watchpoints(const ReplayTask& t) {
    for (auto& w : watches_)
      if (w.last.empty()) w.last = rwd::read_memory(t.tid, w.addr, size_t(w.len));
    uint64_t& armed = watches_armed_[t.tid];
    if (armed == watches_version_) return;
    armed = watches_version_;
    for (int slot = 1; slot <= kWatchSlots; ++slot) {
      const Watch* w = nullptr;
      for (auto& x : watches_)
        if (x.slot == slot) w = &x;
      if (w)
        set_watch_slot(t.tid, slot, w->addr, w->len, w->kind);
      else
        clear_watch_slot(t.tid, slot);
    }
  }

  /// Stops here: tells the waiting caller, then serves calls until an operation resumes.
  void pause(StopInfo si, const Point& here) {
    si.event = session_->events_done();
    last_pause_event_ = si.event;
    last_pause_tid_ = here.tid;
    last_pause_rip_ = 0;
    if (here.tid)
      if (const ReplayTask* t = live(here.tid)) last_pause_rip_ = get_regs(t->tid).rip;
    if (si.tid == 0) si.tid = here.tid ? here.tid : last_event_.tid;
    if (debug_)
      fprintf(stderr, "rewind: timeline: pause (run %d, point kind %d) at event %llu\n",
              int(run_.kind), int(here.kind), (unsigned long long)si.event);
    here_ = here;
    for (auto& w : watches_) {
      if (const ReplayTask* t = live(here.tid ? here.tid : last_event_.tid))
        w.last = rwd::read_memory(t->tid, w.addr, size_t(w.len));
    }
    std::unique_lock lock(mu_);
    stop_ = si;
    stopped_ = true;
    cv_.notify_all();
    for (;;) {
      cv_.wait(lock, [&] { return job_ || shutdown_; });
      if (shutdown_) throw Shutdown{};
      auto job = std::move(job_);
      job_ = nullptr;
      bool op = resume_;
      resume_ = false;
      lock.unlock();
      std::exception_ptr err;
      bool restart = false;
      try {
        job();
      } catch (const Restart&) {
        restart = true;
      } catch (...) {
        err = std::current_exception();
      }
      lock.lock();
      job_done_ = true;
      job_error_ = err;
      if (op && err) {
        stopped_ = true;  // the operation failed to start: stay here
        cv_.notify_all();
        continue;
      }
      if (op && immediate_stop_) {  // the operation ended without replaying (a diversion)
        stop_ = *std::exchange(immediate_stop_, std::nullopt);
        stopped_ = true;
        cv_.notify_all();
        continue;
      }
      cv_.notify_all();
      if (restart) {
        lock.unlock();
        throw Restart{};
      }
      if (op) return;
    }
  }

 public:
  // --- Inspection (engine thread, paused). ---

  const ReplayTask& task(pid_t rec_tid) const {
    const ReplayTask* t = live(rec_tid);
    if (!t) throw Error("no live task " + std::to_string(rec_tid) + " at this point");
    return *t;
  }

  /// The real tid to inspect for `rec_tid`: the diversion's copy while there is one.
  pid_t inspect_tid(pid_t rec_tid) {
    const ReplayTask& t = task(rec_tid);
    return diversion_ && rec_tid == diversion_rec_ ? diversion_tid_ : t.tid;
  }

  /// A forward resume while a diversion exists. If its registers were changed (gdb calling a
  /// function in the program), the copy runs, freely and for real, to its next trap or
  /// signal, and that is the stop (returns true). Otherwise the copy is thrown away and the
  /// replay resumes (returns false).
  bool divert_resume(bool step) {
    if (!diversion_) return false;
    const ReplayTask& live_task = task(diversion_rec_);
    Registers a = get_regs(diversion_tid_), b = get_regs(live_task.tid);
    a.orig_rax = b.orig_rax;
    if (registers_equal(a, b)) {
      end_diversion();
      return false;
    }
    bps_.sync(diversion_pid_, diversion_tid_);  // gdb's breakpoints (the call's return) in the copy
    StopInfo si;
    si.tid = diversion_rec_;
    si.event = session_->events_done();
    if (!resume(diversion_tid_, step ? PTRACE_SINGLESTEP : PTRACE_CONT, 0)) {
      end_diversion();
      throw Error("the copy of the program running the call is gone");
    }
    for (;;) {
      int st = wait_task(diversion_tid_);
      if (WIFEXITED(st) || WIFSIGNALED(st)) {
        diversion_tid_ = 0;
        end_diversion();
        si.reason = StopReason::Signal;
        si.signo = WIFSIGNALED(st) ? WTERMSIG(st) : SIGKILL;
        immediate_stop_ = si;
        return true;
      }
      if ((st >> 16) == PTRACE_EVENT_STOP) {  // a group-stop: go on
        resume(diversion_tid_, step ? PTRACE_SINGLESTEP : PTRACE_CONT, 0);
        continue;
      }
      int sig = WSTOPSIG(st);
      Registers r = get_regs(diversion_tid_);
      if (sig == SIGTRAP && bps_.patched(diversion_pid_, r.rip - 1)) {
        r.rip -= 1;
        set_regs(diversion_tid_, r);
        si.reason = StopReason::Breakpoint;
        si.addr = r.rip;
      } else if (sig == SIGTRAP) {
        si.reason = StopReason::Step;
      } else {
        si.reason = StopReason::Signal;  // not delivered: the call stops here, as in gdb
        si.signo = sig;
      }
      immediate_stop_ = si;
      return true;
    }
  }

  void end_diversion() {
    if (diversion_pid_) bps_.forget(diversion_pid_);
    if (!diversion_tid_) diversion_.release();  // already reaped: nothing left to kill
    diversion_.reset();
    diversion_pid_ = diversion_tid_ = 0;
  }

  void begin_diversion(pid_t rec_tid) {
    if (diversion_) return;
    task(rec_tid);
    // The copy carries the breakpoint patches of the live process; reads hide them alike.
    auto c = session_->diversion();
    if (!c)
      throw Error(
          "cannot change the program here: writes go to a copy of the process, and a "
          "process with threads (or several processes) cannot be copied yet");
    diversion_tid_ = diversion_pid_ = ReplaySession::checkpoint_pids(*c).at(0);
    diversion_rec_ = rec_tid;
    diversion_ = std::move(c);
    bps_.copy_patches(task(rec_tid).pid, diversion_pid_);
  }

  void write(pid_t rec_tid, uint64_t addr, const std::vector<uint8_t>& bytes) {
    begin_diversion(rec_tid);
    rwd::write_memory(diversion_tid_, addr, bytes.data(), bytes.size());
  }

  /// True when task `rec_tid` stands at a syscall's entry: the current point's, or one it
  /// waits in while others run (a SyscallEntry event brought it there).
  bool at_syscall_entry(pid_t rec_tid) {
    if (here_.kind == Point::Entry && here_.tid == rec_tid) return true;
    const ReplayTask* t = live(rec_tid);
    return t && t->at_entry;
  }

  void set_regs_diverted(pid_t rec_tid, const Registers& regs) {
    bool entry = at_syscall_entry(rec_tid);
    begin_diversion(rec_tid);
    Registers r = regs;
    if (entry) {
      r.rip += 2;  // back to the kernel's view at a syscall entry
      r.orig_rax = get_regs(diversion_tid_).orig_rax;
    }
    set_regs(diversion_tid_, r);
  }

  Registers registers(pid_t rec_tid) {
    Registers r = get_regs(inspect_tid(rec_tid));
    if (at_syscall_entry(rec_tid)) {
      // At a syscall's entry the kernel already moved rip past the instruction and set rax
      // to -ENOSYS; show the state before the instruction, as the program had it.
      r.rip -= 2;
      r.rax = r.orig_rax;
      r.orig_rax = uint64_t(-1);  // not in a syscall yet
    }
    return r;
  }

  std::vector<uint8_t> memory(pid_t rec_tid, uint64_t addr, size_t len) {
    const ReplayTask& t = task(rec_tid);
    auto bytes = rwd::read_memory(inspect_tid(rec_tid), addr, len);
    bps_.hide(t.pid, addr, bytes);
    return bytes;
  }

  std::vector<TaskInfo> task_list() const {
    std::vector<TaskInfo> out;
    for (auto& [rec, t] : session_->tasks()) {
      if (t.state == TaskState::Exited) continue;
      TaskInfo i;
      i.tid = rec;
      for (auto& [rec2, t2] : session_->tasks())
        if (t2.tid == t.pid) i.pid = rec2;
      out.push_back(i);
    }
    return out;
  }

  CheckpointStats checkpoint_stats() const { return checkpoints_.stats(); }

  std::vector<uint8_t> auxv(pid_t rec_tid) { return read_proc_auxv(task(rec_tid).pid); }

  BreakpointTable bps_;
  std::vector<Watch> watches_;
  /// Bumped when watches_ changes; per real tid, the version its debug registers hold (a task
  /// starts with none armed: version 0, and watches_version_ starts at 1).
  uint64_t watches_version_ = 1;
  std::map<pid_t, uint64_t> watches_armed_;
  std::unique_ptr<ReplaySession> session_;
  ReplayOptions opts_;
  std::optional<pid_t> rep_step_tid_;  ///< single-stepping through a rep instruction
  bool paused_at_pos_ = false;         ///< this replay's task paused at Run::pos
  /// reach_point has patched code (begin_code_patch): an interrupt waits for a later stop.
  bool code_patched_ = false;
  std::mutex listener_mu_;
  std::function<void(OutputStream, const std::string&)> output_listener_;
  uint64_t output_shown_ = 0;  ///< the last write event whose output was passed on

 private:
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool job_done_ = false, resume_ = false, stopped_ = false, failed_ = false, shutdown_ = false;
  std::exception_ptr job_error_;
  std::string error_;
  StopInfo stop_;

  Run run_;
  Point here_;
  Event last_event_;
  Event replaying_;  ///< the event session_->step() is replaying now
  /// Tasks whose syscall in progress began at a SyscallEntry event (another task ran beside
  /// it): that event's number. Its entry point is there, not just before the Syscall event.
  std::map<pid_t, uint64_t> entry_pending_;
  /// When last_event_ is a Syscall whose entry came at a SyscallEntry event: that event's
  /// number; else 0.
  uint64_t last_entry_event_ = 0;
  After after_ = After::None;
  /// Where the reverse continue in progress stops for a watchpoint hit.
  Timeline::WatchStop reverse_watch_stop_ = Timeline::WatchStop::BeforeWrite;
  pid_t step_tid_ = 0;
  /// The timeline's own breakpoint for a scan (at its target's rip), if any.
  std::optional<CodeSite> internal_bp_;
  std::optional<StopInfo> final_report_;  ///< a reverse step's stop reports this instead
  std::optional<uint64_t> step_from_;     ///< a reverse step counts steps from this event
  bool at_event_start_ = false;           ///< trap_point() names "just after the last event"
  std::map<pid_t, uint64_t> resumed_in_;  ///< task -> 1 + events done at its last resume
  /// Where the last stop was reported (resuming from a breakpoint there steps over it).
  uint64_t last_pause_event_ = 0, last_pause_rip_ = 0;
  pid_t last_pause_tid_ = 0;
  CheckpointStore checkpoints_;
  ReplaySession::CheckpointPtr diversion_;  ///< the copy that writes went to, if any
  pid_t diversion_rec_ = 0, diversion_tid_ = 0, diversion_pid_ = 0;
  std::optional<StopInfo> immediate_stop_;  ///< an operation's stop, made without replaying
  bool lifted_ = false, stepping_over_ = false;
  bool stepped_ = false;     ///< the last resume was a single step
  Registers resume_regs_{};  ///< the resumed task's registers at the last resume

 public:
  std::atomic<bool> interrupt_{false};  ///< set by Timeline::interrupt() from any thread
  bool stop_at_code_mappings_ = false;  ///< Timeline::set_stop_at_code_mappings

 private:
  bool debug_ = getenv("REWIND_DEBUG_TIMELINE") != nullptr;
};

Timeline::Timeline(const std::string& trace_dir) : engine_(std::make_unique<Engine>(trace_dir)) {}

Timeline::~Timeline() = default;

StopInfo Timeline::current() const {
  return engine_->current();
}

StopInfo Timeline::resume_forward() {
  return engine_->operate([this] { engine_->op_forward(); });
}

StopInfo Timeline::step_forward(pid_t tid) {
  return engine_->operate([this, tid] { engine_->op_step(tid); });
}

void Timeline::set_output_listener(std::function<void(OutputStream, const std::string&)> listener) {
  std::lock_guard lock(engine_->listener_mu_);
  engine_->output_listener_ = std::move(listener);
}

void Timeline::interrupt() {
  engine_->interrupt_ = true;
}

StopInfo Timeline::resume_backward(WatchStop at) {
  return engine_->operate([this, at] { engine_->op_reverse_continue(at); });
}

StopInfo Timeline::step_backward(pid_t tid) {
  return engine_->operate([this, tid] { engine_->op_reverse_step(tid); });
}

StopInfo Timeline::seek(uint64_t event) {
  return engine_->operate([this, event] { engine_->op_seek(event); });
}

void Timeline::set_stop_at_code_mappings(bool on) {
  engine_->call([&] { engine_->stop_at_code_mappings_ = on; });
}

CodeSite Timeline::code_site(pid_t tid, uint64_t addr) {
  return rwd::code_site(mappings(tid), addr);
}

void Timeline::add_breakpoint(const CodeSite& site) {
  engine_->call([&] { engine_->bps_.add(site); });
}

void Timeline::remove_breakpoint(const CodeSite& site) {
  engine_->call([&] { engine_->bps_.remove(site); });
}

bool Timeline::add_watchpoint(uint64_t addr, int len, WatchKind kind) {
  if ((len != 1 && len != 2 && len != 4 && len != 8) || addr % uint64_t(len) != 0) return false;
  bool ok = false;
  engine_->call([&] {
    auto& ws = engine_->watches_;
    for (int slot = 1; slot <= kWatchSlots; ++slot) {
      bool used = false;
      for (auto& w : ws) used |= w.slot == slot;
      if (used) continue;
      Watch w;
      w.addr = addr;
      w.len = len;
      w.kind = kind;
      w.slot = slot;
      ws.push_back(w);
      ++engine_->watches_version_;
      ok = true;
      return;
    }
  });
  return ok;
}

void Timeline::remove_watchpoint(uint64_t addr, int len, WatchKind kind) {
  engine_->call([&] {
    ++engine_->watches_version_;
    std::erase_if(engine_->watches_,
                  [&](const Watch& w) { return w.addr == addr && w.len == len && w.kind == kind; });
  });
}

Registers Timeline::registers(pid_t tid) {
  Registers r;
  engine_->call([&] { r = engine_->registers(tid); });
  return r;
}

std::optional<user_fpregs_struct> Timeline::fp_registers(pid_t tid) {
  std::optional<user_fpregs_struct> out;
  engine_->call([&] {
    user_fpregs_struct f{};
    if (ptrace(PTRACE_GETFPREGS, engine_->inspect_tid(tid), nullptr, &f) == 0) out = f;
  });
  return out;
}

std::vector<uint8_t> Timeline::read_memory(pid_t tid, uint64_t addr, size_t len) {
  std::vector<uint8_t> out;
  engine_->call([&] { out = engine_->memory(tid, addr, len); });
  return out;
}

void Timeline::write_memory(pid_t tid, uint64_t addr, const std::vector<uint8_t>& bytes) {
  engine_->call([&] { engine_->write(tid, addr, bytes); });
}

void Timeline::set_registers(pid_t tid, const Registers& regs) {
  engine_->call([&] { engine_->set_regs_diverted(tid, regs); });
}

std::vector<TaskInfo> Timeline::tasks() {
  std::vector<TaskInfo> out;
  engine_->call([&] { out = engine_->task_list(); });
  return out;
}

uint64_t Timeline::event_count() const {
  if (!event_count_) {
    TraceReader reader(engine_->opts_.trace_dir);
    while (reader.next()) {
    }
    event_count_ = reader.last_event();
  }
  return event_count_;
}

std::string Timeline::executable() const {
  std::string path;
  engine_->call([&] {
    const auto& tr = engine_->session_->trace();
    path = tr.file_path(tr.meta().exe_file);
  });
  return path;
}

bool Timeline::add_checkpoint() {
  bool ok = false;
  engine_->call([&] { ok = engine_->request_checkpoint(); });
  return ok;
}

CheckpointStats Timeline::checkpoints() {
  CheckpointStats st;
  engine_->call([&] { st = engine_->checkpoint_stats(); });
  return st;
}

std::vector<ProcMapping> Timeline::mappings(pid_t tid) {
  std::vector<ProcMapping> out;
  engine_->call([&] { out = read_proc_maps(engine_->inspect_tid(tid)); });
  return out;
}

std::vector<uint8_t> Timeline::auxv(pid_t tid) {
  std::vector<uint8_t> out;
  engine_->call([&] { out = engine_->auxv(tid); });
  return out;
}

}  // namespace rwd
