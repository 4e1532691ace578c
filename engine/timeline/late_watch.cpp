// Late-armed watchpoints of a reverse continue's scan (Run::watch_at_ms): the scan replays
// most of its window with the debugger's watchpoints out of the debug registers, takes a
// checkpoint near the window's end, and counts hits only from there. A watchpoint hit at
// every pass of a loop (a Python line breakpoint is a read of the line's code unit)
// otherwise costs a trap at each of the loop's passes since the window's start, where the
// reverse continue wants only the last. A try that armed too late is followed by one armed
// earlier, kLateWatchGrowth times the lead (rescan_armed), so the hits counted grow
// geometrically back from the window's end (docs/how-it-works.md, "Late watchpoints").
#include <cstdio>

#include "engine/timeline/replay_controller.h"

namespace rwd {

void ReplayController::set_late_watch(double to_ms, std::chrono::microseconds lead) {
  run_.watch_at_ms = 0;
  run_.watch_armed = false;
  run_.watch_lead = lead;
  const auto* scan = run_.as<runs::Scan>();
  // Only for a window that ends at an event: one that ends at a point between events is
  // found by a breakpoint at its instruction, whose traps (at every pass of a loop there)
  // both slow the replay before the watchpoints go in and keep the interrupt from coming.
  if (!inner_on_ || !late_watch_on_ || late_tries_ >= kLateWatchTries || !scan ||
      scan->find_by_trap || scan->steps || scan->count_passes || scan->count_arrivals ||
      (scan->target.kind == Point::Trap && !scan->below) || watches_.empty() ||
      watches_.in_software() || run_.count_from)
    return;
  const Saved* from = start_for(run_);
  const double window = to_ms - (from ? from->cost_ms : 0);
  const double lead_ms = double(lead.count()) / 1000;
  if (window < lead_ms + double(kLateWatchMinWindow.count())) return;
  run_.watch_at_ms = to_ms - lead_ms;
  run_.watch_start_event = run_.start_event;
  run_.watch_start_inner = run_.inner;
  if (debug_)
    fprintf(stderr,
            "rewind: timeline: watchpoints to go in at %.2f ms of replay, %.2f ms before the "
            "window's end\n",
            run_.watch_at_ms, lead_ms);
}

bool ReplayController::late_watch_ready(const ReplayTask& t) {
  if (!late_watch_due()) return false;
  const uint64_t id = take_inner_checkpoint(t, true);
  const Saved* c = id ? inner_.find(id) : nullptr;
  if (debug_)
    fprintf(stderr,
            "rewind: timeline: late watchpoints due at %.3f ms (for %.3f): checkpoint %llu\n",
            checkpoints_.cost_here(), run_.watch_at_ms, (unsigned long long)id);
  if (!c) return false;  // at the next interrupt (before_resume asks for one soon)
  if (!bps_.empty()) sync_breakpoints(t);  // the copy took them out
  arm_late_watch_from(c->event, id);
  return true;
}

void ReplayController::arm_late_watch_from(uint64_t event, uint64_t inner) {
  // What was counted before (breakpoint hits, checkpoints passed) counts from elsewhere.
  run_.hits = 0;
  run_.hits_at = {{.event = event, .inner = inner, .hits = 0}};
  run_.last_hit_info.reset();
  run_.watch_armed = true;
  ++late_watches_;
  run_.start_event = event;
  run_.inner = inner;
  if (debug_)
    fprintf(stderr,
            "rewind: timeline: watchpoints armed from the checkpoint at event %llu (inner "
            "%llu)\n",
            (unsigned long long)event, (unsigned long long)inner);
}

void ReplayController::late_watch_at_event() {
  if (!late_watch_pending()) return;
  const uint64_t n = session_->events_done();
  const double now = checkpoints_.cost_here();
  run_.watch_events.emplace_back(n, now);
  if (run_.watch_events.size() > Run::kWatchEvents) run_.watch_events.pop_front();
  if (run_.watch_anchor_event == n) {
    run_.watch_at_ms = now + run_.watch_anchor_ms;
    run_.watch_anchored = true;
    if (debug_)
      fprintf(stderr, "rewind: timeline: late watchpoints due at %.3f ms, %.3f after event %llu\n",
              run_.watch_at_ms, run_.watch_anchor_ms, (unsigned long long)n);
  }
  // Due at an event after their anchor (a stretch of events, where no interrupt lands
  // between two stops): they go in here, at the event's checkpoint, unless it ends the
  // window. Not when their time is only estimated: a replay that reached an event late
  // armed them there before a loop.
  const auto& scan = *run_.as<runs::Scan>();
  if (!run_.watch_anchored || !late_watch_due() ||
      (scan.below ? n >= scan.below : n >= scan.target.event))
    return;
  if (!checkpoints_.at(n) && !add_event_checkpoint(false)) return;  // at the next one
  arm_late_watch_from(n, 0);
}

std::optional<double> ReplayController::long_interval_end(const Run& done) const {
  double end = checkpoints_.cost_here();  // the window's end, as this replay reached it
  for (auto it = done.watch_events.rbegin(); it != done.watch_events.rend(); ++it) {
    if (end - it->second >= double(kLongInterval.count())) return end;
    end = it->second;
  }
  return std::nullopt;
}

Next ReplayController::rescan_armed(const Run& done, std::optional<CodeSite> internal,
                                    const char* why) {
  if (debug_)
    fprintf(stderr, "rewind: timeline: late watchpoints: %s (at %.3f ms): scan again\n", why,
            checkpoints_.cost_here());
  ++late_tries_;
  runs::Scan again = *done.as<runs::Scan>();
  arm_internal(internal);  // the same target: the same site
  run_ = Run(again);
  run_.start_event = done.watch_start_event;
  run_.inner = done.watch_start_inner;
  run_.count_from = done.count_from;
  // Late again before the window's end as this replay reached it (an estimate can be
  // long): with the same lead when this one never armed (the first time), else a longer
  // one (replays of one window differ by a fraction of a millisecond; or no hit came after
  // it armed). Armed from the start once the lead covers the window.
  const bool same = !done.watch_armed && !done.watch_measured;
  const auto lead = same ? done.watch_lead : done.watch_lead * kLateWatchGrowth;
  // No hit after the checkpoint the last try counted from: the new lead counts back from
  // there (its replay time, as this replay took it), not from the window's end.
  const Saved* counted = !done.watch_armed ? nullptr
                         : done.inner      ? inner_.find(done.inner)
                                           : checkpoints_.at(done.start_event);
  if (counted) {
    set_late_watch(counted->cost_ms, lead);
  } else if (std::optional<double> end = long_interval_end(done)) {
    set_late_watch(*end, lead);
  } else {
    // Nor for the windows further back of this reverse continue: they end in the same
    // stretch of short intervals, and each try would replay one.
    late_tries_ = kLateWatchTries;
    if (debug_)
      fprintf(stderr, "rewind: timeline: late watchpoints: no long interval at the end\n");
  }
  run_.watch_measured = true;
  if (run_.watch_at_ms > 0) {
    // From the latest checkpoint this replay took inside the window before the new arm
    // time, if any: a long window's stretch before it is not replayed at every try. (Each
    // lies before what this replay reached later, the window's end included.)
    const Saved* best = nullptr;
    for (const Saved& s : inner_.all())
      if (s.replay == replays_ && s.event >= run_.watch_start_event &&
          s.cost_ms <= run_.watch_at_ms && (!best || s.cost_ms > best->cost_ms))
        best = &s;
    if (best) {
      run_.start_event = best->event;
      run_.inner = best->id;
    }
    // The same distance after the last event before it, as this replay ran (not from a
    // start checkpoint past that event: its own replay time is this replay's already).
    for (auto it = done.watch_events.rbegin(); it != done.watch_events.rend(); ++it) {
      if (it->second > run_.watch_at_ms) continue;
      if (!best || it->first > best->event) {
        run_.watch_anchor_event = it->first;
        run_.watch_anchor_ms = run_.watch_at_ms - it->second;
      }
      break;
    }
    // Or from the checkpoint just after an event no later than that one, when it comes
    // later than the one inside an interval: the arm time is then its own replay time plus
    // the distance measured from that event.
    const uint64_t a = run_.watch_anchor_event;
    const Saved* ev = a ? checkpoints_.latest_at_most(a) : nullptr;
    if (ev && ev->event >= run_.watch_start_event && (!best || ev->event > best->event)) {
      run_.start_event = ev->event;
      run_.inner = 0;
      if (ev->event == a) {  // (its event is not replayed again: no anchor to wait for)
        run_.watch_at_ms = ev->cost_ms + run_.watch_anchor_ms;
        run_.watch_anchor_event = 0;
      }
    }
  }
  return Next::Replay;
}

}  // namespace rwd
