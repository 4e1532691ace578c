// Reverse continue and reverse step (DESIGN.md "Checkpoints and reverse execution"): a scan
// replays from a checkpoint to the current point counting hits or steps, then a second
// replay goes to the last hit or the step before (replay_controller.h).
#include <cstdio>
#include <utility>

#include "engine/arch/insn.h"
#include "engine/errors.h"
#include "engine/os/debug_registers.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/ticks/memory_digest.h"
#include "engine/timeline/replay_controller.h"
#include "engine/trace/buffered_records.h"

namespace rwd {

Next ReplayController::op_reverse_continue(Timeline::WatchStop at) {
  interrupt_ = false;
  if (auto n = reverse_continue_from_hit(at)) return *n;
  reverse_watch_stop_ = at;
  late_tries_ = 0;
  return start_scan(After::ReverseContinue, false);
}

std::optional<Next> ReplayController::reverse_continue_from_hit(Timeline::WatchStop at) {
  std::optional<HitOrigin> o = std::exchange(hit_origin_, std::nullopt);
  const bool after_write = at == Timeline::WatchStop::AfterWrite;
  if (!o || o->hit < 2 || o->after_write != after_write || diversion_ || here_.kind != Point::Trap)
    return std::nullopt;
  reverse_watch_stop_ = at;
  runs::HitNumber to_hit{.count = o->hit - 1,
                         .report = {.reason = StopReason::Watchpoint},
                         .after_write = after_write};
  Run later(to_hit);
  o->from.hits = o->hit - 1;  // start_after_hits looks for a checkpoint before this one
  if (std::optional<uint64_t> before = start_after_hits(later, o->from)) {
    later.as<runs::HitNumber>()->count = o->hit - 1 - *before;
  } else {
    later = Run::same_start(to_hit, o->from);
    // (Thinned since: the scan finds the hit instead.)
    if (later.inner ? !inner_.find(later.inner)
                    : later.start_event > 0 && !checkpoints_.at(later.start_event))
      return std::nullopt;
  }
  after_ = After::None;
  if (debug_)
    fprintf(stderr,
            "rewind: timeline: reverse continue from hit %llu of a run: to hit %llu from its "
            "checkpoint at event %llu (inner %llu)\n",
            (unsigned long long)o->hit, (unsigned long long)later.as<runs::HitNumber>()->count,
            (unsigned long long)later.start_event, (unsigned long long)later.inner);
  run_ = later;
  return Next::Replay;
}

Next ReplayController::op_reverse_step(pid_t tid, uint64_t skip_lo, uint64_t skip_hi) {
  hit_origin_.reset();
  end_diversion();
  step_tid_ = tid;
  skip_lo_ = skip_lo;
  skip_hi_ = skip_hi;
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
  if (here_.kind == Point::Trap && here_.tid != tid) {
    // Stopped in another task: `tid` has not run since the last event (a replay runs only
    // the task of the next event), so it steps back from that event's point. (A scan to the
    // other task's point counting this task's steps would never check that point, and
    // replayed to the end of the trace.)
    here_ = Point{.kind = Point::Between, .event = here_.event};
  }
  if (here_.kind == Point::Entry && here_.tid == tid) {
    // Before a syscall: the previous instruction ran between the last event and this one.
    Next n = start_scan(After::ReverseStep, true);
    count_arrivals_instead();
    return n;
  }
  if (here_.kind == Point::Between && here_.event > 1) {
    const Event* last = &last_event_;
    if ((last->kind == EventKind::Syscall || last->kind == EventKind::Exec) &&
        made_by(*last, tid)) {
      // Just after a syscall: one instruction back is that syscall's entry. After an execve
      // from another thread, the task that made it had another tid there: it is that
      // thread which stands at the entry, and the step reports it.
      run_ = Run(runs::Goto{.target = entry_of_last_syscall(last->tid, here_.event),
                            .report = {.reason = StopReason::Step, .tid = last->tid}});
      return Next::Replay;
    }
    if ((last->kind == EventKind::Signal || is_emulated_insn(last->kind)) && last->tid == tid) {
      // At a signal handler's first instruction: one instruction back is where the signal
      // arrived, in the run that led to the signal event. Just after an rdtsc or a cpuid: one
      // instruction back is that instruction itself, the last step of the run that led to it
      // (counting from this event instead finds no step before the point, and the step
      // back stayed where it was).
      step_from_ = here_.event - 1;
    }
  }
  if (!step_from_)
    if (auto n = start_pass_scan()) return *n;
  return start_scan(After::ReverseStep, true);
}

void ReplayController::count_arrivals_instead() {
  if (reverse_steps_forced()) return;
  auto* scan = run_.as<runs::Scan>();
  const ReplayTask* t = live(here_.tid);
  Registers r;
  if (!scan || !scan->steps || !t || !try_get_regs(t->tid, r) || r.rip < 2) return;
  // `syscall` (0f 05), `sysenter` (0f 34) and `int 0x80` (cd 80) are 2 bytes each; the
  // entry's rip is the address after the instruction (its rcx, for `syscall`).
  const uint64_t x = r.rip - 2;
  std::vector<uint8_t> code = rwd::read_memory(t->tid, x, 2);
  bps_.hide(t->pid, x, code);
  const bool syscall_insn = syscall_insn_name(code.data(), code.size()) != nullptr;
  // A reverse step that skips code (skip_lo_, skip_hi_) counts where its steps land.
  if (!syscall_insn || (skip_hi_ && x >= skip_lo_ && x < skip_hi_)) return;
  pass_fallback_ = *scan;
  steps_inner_ = 0;
  scan->steps.reset();
  scan->count_arrivals = x;
  arm_internal(site_in(t->pid, x));
  if (debug_)
    fprintf(stderr,
            "rewind: timeline: reverse step from the entry of event %llu: arrivals at %llx\n",
            (unsigned long long)here_.event, (unsigned long long)x);
}

Point ReplayController::entry_of_last_syscall(pid_t tid, uint64_t n) const {
  Point p;
  p.kind = Point::Entry;
  p.event = last_entry_event_ ? last_entry_event_ : n;
  p.tid = tid;
  return p;
}

uint32_t ReplayController::buffer_pos(pid_t rec_tid) const {
  const ReplayTask* t = live(rec_tid);
  if (!t || !t->syscall_buffer || !session_->can_pause_buffer(rec_tid)) return 0;
  uint32_t pos = 0;
  read_memory_exact(t->tid, t->syscall_buffer, &pos, sizeof pos);
  return pos;
}

Next ReplayController::start_scan(After after, bool count_steps, uint64_t after_hit) {
  if (debug_)
    fprintf(stderr, "rewind: timeline: scan to point kind %d event %llu rip %llx\n",
            int(here_.kind), (unsigned long long)here_.event, (unsigned long long)here_.regs.rip);
  runs::Scan scan;
  scan.target = here_;
  scan.after_write =
      after == After::ReverseContinue && reverse_watch_stop_ == Timeline::WatchStop::AfterWrite;
  if (here_.kind == Point::Trap) {
    const ReplayTask* t = live(here_.tid);
    if (!t) throw Error("the current task is gone");
    set_point_digests(scan.target, *t);
    if (debug_) target_report_ = digest_report(t->tid, live_memory_of(*t).dead);
    // A counting scan single-steps the task from where the target can first be, checking
    // each step; a breakpoint would only stop it at every earlier pass (thousands, in a
    // loop making buffered syscalls). A reverse continue finds it by a trampoline comparing
    // registers where one can be put there, else by a breakpoint at its instruction.
    if (!count_steps) aim_scan(scan, *t, stack_words_at(*t, here_.regs.rsp));
  }
  uint64_t start_event = 0, count_from = 0, inner = 0;
  if (after == After::ReverseContinue && watches_.in_software()) {
    // Software watchpoints: the first window is the target's own interval.
    scan.window = 1;
    count_from = window_start(here_, scan.window);
  }
  if (count_steps) {
    StepCount c;
    c.tid = step_tid_;
    c.event = here_.kind == Point::Entry ? here_.event - 1 : here_.event;
    if (step_from_) {
      // Back from a signal's handler into the run before the signal event, which used all
      // of that event's buffered records.
      c.event = *std::exchange(step_from_, std::nullopt);
      if (session_->can_pause_buffer(c.tid)) c.pos = buffered_bytes_used(last_event_.buffered);
    } else if (after_hit) {
      c.after_hit = after_hit;
      start_event = run_.start_event;
      count_from = run_.count_from;
      inner = run_.inner;
    } else if (here_.kind != Point::Between) {
      c.pos = buffer_pos(c.tid);
    }
    scan.steps = c;
  }
  after_ = after;
  // A reverse continue from a point inside an interval counts from the nearest checkpoint
  // known to lie before it there, if any (scan_done goes on back from it).
  if (after == After::ReverseContinue && here_.kind == Point::Trap && inner_on_)
    inner = usable_inner(here_inner_, here_.regs);
  if (after == After::ReverseContinue) {
    origin_scan_ = scan;
    origin_site_ = internal_bp_;
  }
  // Most of the stretch from that checkpoint runs without the trampoline (Run::arm_after).
  bool late = after == After::ReverseContinue && scan.find_by_trap;
  run_ = Run(std::move(scan));
  run_.start_event = start_event;
  run_.count_from = count_from;
  run_.inner = inner;
  if (late) {
    // From a checkpoint just after an event (none inside the interval is known yet), the
    // same share of the replay time from there: the checkpoints the scan leaves inside the
    // interval meanwhile (inner_checkpoint_due) let the next reverse continue, and the replay
    // to this one's hit, start near the point instead of at the event.
    const Saved* from = inner_.find(inner);
    run_.arm_after = from ? late_arm(from, here_replay_, here_cost_)
                          : late_arm_from_event(start_for(run_), here_cost_);
  }
  if (after == After::ReverseContinue) set_late_watch(here_cost_, kLateWatchLead);
  return Next::Replay;
}

std::optional<Next> ReplayController::window_end_miss() {
  auto* scan = run_.as<runs::Scan>();
  if (!scan || !scan->window_end || ++run_.trap_misses < kWindowEndMisses || !origin_scan_)
    return std::nullopt;
  // A branch into the bytes the trampoline covers, or passes with the point's registers
  // but not its memory, at every turn of a loop: stopping at each costs more than the
  // replay from the window's end to the reverse continue's own point, which has no hit
  // either. Count to that point instead, from the same checkpoint.
  if (debug_) fprintf(stderr, "rewind: timeline: the window's end is costly: scan to the start\n");
  if (internal_bp_) bps_.remove_internal(*std::exchange(internal_bp_, std::nullopt));
  runs::Scan again = *origin_scan_;
  again.below = 0;
  run_ = Run::same_start(again, run_);
  arm_internal(origin_site_);
  return Next::Replay;
}

void ReplayController::aim_scan(runs::Scan& scan, const ReplayTask& t,
                                std::vector<uint64_t> stack_words) {
  // (Watchpoints only in the CPU's debug registers, and only write ones: a moved
  // instruction's write traps there as the original's would.)
  scan.find_by_trap = !watches_.in_software() && trap_may_find(t, scan.target, true);
  for (const Watch& w : watches_.all()) scan.find_by_trap &= w.kind == WatchKind::Write;
  if (scan.find_by_trap)
    scan.stack_words = std::move(stack_words);
  else
    arm_internal(site_in(t.pid, scan.target.regs.rip));
}

void ReplayController::arm_internal(std::optional<CodeSite> site) {
  internal_bp_ = site;
  if (site) bps_.add_internal(*site);
  internal_placed_ = site.has_value();
}

void ReplayController::place_internal() {
  if (!internal_bp_) return;
  const auto* scan = run_.as<runs::Scan>();
  bool wanted = !scan || session_->events_done() >= scan->target.events_done();
  if (wanted == internal_placed_) return;
  if (wanted)
    bps_.add_internal(*internal_bp_);
  else
    bps_.remove_internal(*internal_bp_);
  internal_placed_ = wanted;
}

Next ReplayController::scan_back_inside(const Run& done, std::optional<CodeSite> internal) {
  const runs::Scan& scan = *done.as<runs::Scan>();
  const Saved* c = inner_.find(done.inner);
  const ReplayTask* t = c ? live(c->tid) : nullptr;
  runs::Scan again = scan;
  again.below = 0;
  if (!c || !t) {
    // That checkpoint is gone (or its task): the whole interval from the event's checkpoint,
    // to the same target (the further-back scans go on from there).
    if (debug_) fprintf(stderr, "rewind: timeline: scan the target's interval from its event\n");
    run_ = Run(again);
    arm_internal(internal);  // the same target: the same site
    run_.count_from = done.count_from;
    return Next::Replay;
  }
  const Point at_c{.kind = Point::Trap,
                   .event = c->event,
                   .tid = c->tid,
                   .regs = c->regs,
                   .digest = c->digest,
                   .alone = c->alone};
  if (interrupt_.exchange(false)) {
    // A pause asked for (Timeline::interrupt): c's point is the earliest one shown to hold
    // no hit after it. The replay stands there as soon as it restores c (replay()).
    after_ = After::None;
    run_ = Run(runs::Goto{.target = at_c, .report = {.reason = StopReason::Interrupted}});
    run_.inner = c->id;
    return Next::Replay;
  }
  // No hit after checkpoint c: the next scan ends at c's point, from the one before it.
  again.target = at_c;
  again.window_end = true;
  aim_scan(again, *t, c->stack_words);  // (not the live task's now)
  uint64_t before = usable_inner(c->prev, c->regs);
  // Most of the window runs without the trampoline (Run::arm_after).
  auto arm_after = again.find_by_trap ? late_arm(inner_.find(before), c->replay, c->cost_ms)
                                      : std::chrono::milliseconds(0);
  if (debug_)
    fprintf(stderr,
            "rewind: timeline: no hit after checkpoint %llu: scan to it from %llu (trampoline "
            "after %lld ms)\n",
            (unsigned long long)c->id, (unsigned long long)before, (long long)arm_after.count());
  run_ = Run(again);
  run_.count_from = done.count_from;
  run_.inner = before;
  run_.arm_after = arm_after;
  return Next::Replay;
}

uint64_t ReplayController::window_start(const Point& target, uint64_t window) {
  uint64_t last = target.events_done();
  return last > window ? last + 1 - window : 0;
}

Next ReplayController::interrupt_reverse_continue() {
  if (internal_bp_) {
    bps_.remove_internal(*internal_bp_);
    internal_bp_.reset();
  }
  uint64_t below = run_.as<runs::Scan>()->below;
  after_ = After::None;
  run_ = Run(runs::Goto{.target = {.kind = Point::Between, .event = below},
                        .report = {.reason = StopReason::Interrupted}});
  return Next::Replay;
}

Next ReplayController::scan_done() {
  Run done = run_;
  const runs::Scan& scan = *done.as<runs::Scan>();
  std::optional<CodeSite> internal = internal_bp_;
  if (debug_)
    fprintf(stderr, "rewind: timeline: scan reached event %llu: %llu hits, %llu steps\n",
            (unsigned long long)session_->events_done(), (unsigned long long)done.hits,
            (unsigned long long)done.steps);
  if (internal_bp_) {
    bps_.remove_internal(*internal_bp_);
    internal_bp_.reset();
  }
  // Reached by another stop than the trampoline's own (a watchpoint's trap there).
  if (scan.find_by_trap && pass_trap_.installed()) pass_trap_.remove();
  if (after_ == After::ReverseContinue && late_watch_pending())
    return rescan_armed(done, internal, "the window ended before they went in");
  if (after_ == After::ReverseContinue && done.watch_armed && done.hits == 0)
    return rescan_armed(done, internal, "no hit after they went in");
  if (after_ == After::ReverseContinue && done.hits == 0 && done.inner) {
    return scan_back_inside(done, internal);
  }
  if (after_ == After::ReverseContinue && done.hits == 0 && done.count_from > 0) {
    // No hit in the window: one twice as long, from a checkpoint before it.
    runs::Scan again = scan;
    again.below = done.count_from;
    again.window = scan.window * 2;
    arm_internal(internal);
    run_ = Run(again);
    run_.count_from = window_start(scan.target, again.window);
    return Next::Replay;
  }
  if (after_ == After::ReverseContinue && done.hits == 0 && done.start_event > 0) {
    // No hit between the checkpoint and now: look further back (after_ stays).
    runs::Scan again = scan;
    again.below = done.start_event;
    arm_internal(internal);  // the same target: the same site
    run_ = Run(again);
    if (const Saved* end = checkpoints_.at(done.start_event))
      set_late_watch(end->cost_ms, kLateWatchLead);
    return Next::Replay;
  }
  if (after_ == After::ReverseContinue) {
    after_ = After::None;
    if (done.hits == 0) {
      run_ = Run(runs::Goto{.target = {.kind = Point::Between, .event = 1},
                            .report = {.reason = StopReason::TraceStart}});
    } else {
      runs::HitNumber to_hit{
          .count = done.hits, .report = *done.last_hit_info, .after_write = scan.after_write};
      Run later(to_hit);
      if (std::optional<uint64_t> before = start_after_hits(later, done)) {
        // From the scan's last checkpoint before its last hit: fewer hits to count there.
        later.as<runs::HitNumber>()->count = done.hits - *before;
        if (debug_)
          fprintf(stderr,
                  "rewind: timeline: to hit %llu of the scan from its checkpoint at event %llu "
                  "(inner %llu), %llu hits after it\n",
                  (unsigned long long)done.hits, (unsigned long long)later.start_event,
                  (unsigned long long)later.inner, (unsigned long long)(done.hits - *before));
        run_ = later;
      } else if (done.watch_armed) {
        // The checkpoint the late watchpoints' hits count from is gone.
        after_ = After::ReverseContinue;
        return rescan_armed(done, internal, "their checkpoint is gone");
      } else {
        run_ = Run::same_start(to_hit, done);
      }
    }
    return Next::Replay;
  }
  if (scan.count_passes) return pass_scan_done(done);
  if (scan.count_arrivals) {
    if (done.passes == 0) {
      // Never arrived at the instruction by running to it: the task began the interval on
      // it (a restarted syscall). The steps from the event are few then.
      if (debug_) fprintf(stderr, "rewind: timeline: no arrival at the syscall: steps\n");
      run_ = Run(*pass_fallback_);
      return Next::Replay;
    }
    StopInfo report{.reason = StopReason::Step, .tid = scan.target.tid};
    if (final_report_) report = *std::exchange(final_report_, std::nullopt);
    pass_bp_ = site_in(live(scan.target.tid)->pid, scan.count_arrivals);
    bps_.add_internal(*pass_bp_);
    run_ = Run::same_start(runs::PassNumber{.tid = scan.target.tid,
                                            .addr = scan.count_arrivals,
                                            .count = done.passes,
                                            .report = report,
                                            .event = scan.target.event - 1,
                                            .then_step_back = true},
                           done);
    return Next::Replay;
  }
  // ReverseStep: single-step to one instruction before the current point.
  const StepCount& c = *scan.steps;
  bool after_task_event = last_event_.tid == c.tid && last_event_.number == c.event && c.event > 1;
  if (done.steps == 0 && after_task_event && last_event_.kind == EventKind::Signal) {
    // At a signal handler's first instruction, reached by a step: one instruction back is
    // where the signal arrived, in the run before the signal event (op_reverse_step does
    // the same from the point just after that event). after_ stays ReverseStep.
    StepCount before{.tid = c.tid, .event = c.event - 1};
    if (session_->can_pause_buffer(c.tid)) before.pos = buffered_bytes_used(last_event_.buffered);
    run_ = Run(runs::Scan{.target = {.kind = Point::Between, .event = c.event}, .steps = before});
    return Next::Replay;
  }
  if (skip_hi_ && done.landing == 0 && done.steps > 0 && c.pos > 0 && !c.after_hit &&
      !c.after_pass) {
    // Every step since the task's last buffered syscall was in the skipped code (the
    // library made it on the way to this point): count again from the event, before the
    // library was entered. after_ stays ReverseStep.
    StepCount from_event = c;
    from_event.pos = 0;
    run_ = Run(runs::Scan{.target = scan.target, .steps = from_event});
    return Next::Replay;
  }
  // The last step counted to an entry is the syscall instruction's own, and the one before
  // it (the arrival there) shows the entry's state: one instruction back is one more.
  if (scan.target.kind == Point::Entry && done.steps > 0) --done.steps;
  StopInfo report{.reason = StopReason::Step, .tid = c.tid};
  if (final_report_)
    report = *std::exchange(final_report_, std::nullopt);
  else if (done.steps == 0 && c.event <= 1)  // (after_task_event needs c.event > 1)
    report.reason = StopReason::TraceStart;
  if (done.steps == 0 && after_task_event && last_event_.kind == EventKind::Syscall) {
    // Nothing ran between the task's syscall and the target (a signal delivered as the
    // syscall returned): one instruction back is that syscall's entry.
    run_ = Run(runs::Goto{.target = entry_of_last_syscall(c.tid, c.event), .report = report});
  } else if (done.steps == 0) {
    run_ = Run(runs::Goto{.target = {.kind = Point::Between, .event = c.event}, .report = report});
  } else if (skip_hi_ && done.landing > 0 && done.landing < done.steps) {
    // Back past the skipped code: to the last step that left the task outside it.
    run_ = Run::same_start(runs::Steps{.from = c, .count = done.landing, .report = report}, done);
  } else if (skip_hi_ && done.landing == 0 && c.pos == 0 && !c.after_hit && !c.after_pass) {
    // Every step since the event was in the skipped code: back to the event, at least.
    run_ = Run(runs::Goto{.target = {.kind = Point::Between, .event = c.event}, .report = report});
  } else if (c.after_pass && done.steps > 1 && inner_.find(pass_pre_)) {
    // From the checkpoint taken where these steps began (on_pass_trap). (With no step to
    // make, the Steps run of the pass stops at the pass itself.)
    StepCount from{.tid = c.tid, .event = c.event};
    run_ = Run(runs::Steps{.from = from, .count = done.steps - 1, .report = report});
    run_.start_event = c.event;
    run_.inner = pass_pre_;
  } else {
    run_ = Run::same_start(runs::Steps{.from = c, .count = done.steps - 1, .report = report}, done);
  }
  after_ = After::None;
  skip_hi_ = 0;
  return Next::Replay;
}

Next ReplayController::step_back_from_arrival(const ReplayTask& t, const Registers& r,
                                              const StopInfo& report) {
  bps_.remove_internal(*std::exchange(pass_bp_, std::nullopt));
  final_report_ = report;
  here_ = trap_point(t, r);
  step_tid_ = t.rec_tid;
  const uint64_t arrivals = run_.steps;
  // The passes at the point's instruction are the arrivals just counted. No trampoline can
  // count them at a syscall instruction (it moves the instructions it covers), so
  // pass_scan_done counts those of an instruction before it instead, or single-steps from
  // the pass before (falling back to steps from the event where neither can be done). Where
  // passes cannot be counted at all (pass_count_scan), the steps count from the last event
  // or buffered syscall's pause.
  std::optional<runs::Scan> scan = pass_count_scan();
  if (!scan) return start_scan(After::ReverseStep, true);
  pass_inner_ = 0;  // the arrivals counted from the run's own start
  Run done = Run::same_start(std::move(*scan), run_);
  done.passes = arrivals;
  after_ = After::ReverseStep;
  return pass_scan_done(done);
}

void ReplayController::count_step(std::optional<uint64_t> rip) {
  ++run_.steps;
  if (skip_hi_ && rip && (*rip < skip_lo_ || *rip >= skip_hi_)) run_.landing = run_.steps;
}

}  // namespace rwd
