// What the queries over a recording (value_history.h, script_history.h, script_hits.cpp)
// share on a timeline: the processes of tasks, a write watchpoint held for a scope, the code
// site of a position, and the pointer a watched word holds. Internal to engine/debugger.
#pragma once

#include <sys/types.h>

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/debugger/debugger.h"
#include "engine/debugger/recording_query.h"
#include "engine/errors.h"
#include "engine/timeline/timeline.h"

namespace rwd {

/// The pointer held in the 8 bytes `b` (a watchpoint stop's old or new value; fewer: 0).
inline uint64_t pointer_in(const std::vector<uint8_t>& b) {
  uint64_t v = 0;
  if (b.size() == sizeof v) std::memcpy(&v, b.data(), sizeof v);
  return v;
}

/// The code site of position `p`'s instruction on `tl` (standing there), nullopt when `p` is
/// not between events or the site cannot be named.
inline std::optional<CodeSite> position_site(Timeline& tl, const TimelinePosition& p) {
  if (p.kind != TimelinePosition::Trap) return std::nullopt;
  try {
    return tl.code_site(p.tid, p.regs.rip);
  } catch (const Error&) {
    return std::nullopt;
  }
}

/// Recorded pids of tasks by tid, read again from the timeline for a tid not seen yet.
class TaskProcesses {
 public:
  explicit TaskProcesses(Timeline& tl) : tl_(tl) {}
  pid_t pid_of(pid_t tid) {
    auto it = pids_.find(tid);
    if (it != pids_.end()) return it->second;
    for (const TaskInfo& t : tl_.tasks()) pids_[t.tid] = t.pid;
    it = pids_.find(tid);
    return it == pids_.end() ? 0 : it->second;
  }

 private:
  Timeline& tl_;
  std::map<pid_t, pid_t> pids_;
};

/// A write watchpoint on `w` in `tl` for as long as it lives, unless the debugger's user
/// watches the same bytes already (the same slot serves both then).
class ScopedWatch {
 public:
  ScopedWatch(Timeline& tl, const WatchInfo& w, bool shared) : tl_(tl), w_(w), owned_(!shared) {
    if (owned_ && !tl_.add_watchpoint(w.addr, w.len, WatchKind::Write))
      throw Error("cannot follow " + std::to_string(w.len) + " bytes at " + hex(w.addr) +
                  ": all hardware watchpoint slots are in use (remove a data breakpoint)");
  }
  ~ScopedWatch() {
    if (owned_) tl_.remove_watchpoint(w_.addr, w_.len, WatchKind::Write);
  }
  ScopedWatch(const ScopedWatch&) = delete;
  ScopedWatch& operator=(const ScopedWatch&) = delete;

 private:
  Timeline& tl_;
  WatchInfo w_;
  bool owned_;
};

/// A write watchpoint on `w` on the session's timeline while it lives, with the user's other
/// watchpoints set aside (a search for `w`'s writes stops at nothing else, and needs one
/// debug register even when data breakpoints hold all of them).
class SessionWatch {
 public:
  SessionWatch(Debugger& d, const WatchInfo& w) : d_(d) {
    d_.set_watches_aside(w.addr, w.len);
    try {
      watch_.emplace(d_.timeline(), w, d_.watching(w.addr, w.len));
    } catch (...) {
      d_.restore_watches();
      throw;
    }
  }
  ~SessionWatch() {
    watch_.reset();
    d_.restore_watches();
  }
  SessionWatch(const SessionWatch&) = delete;
  SessionWatch& operator=(const SessionWatch&) = delete;

 private:
  Debugger& d_;
  std::optional<ScopedWatch> watch_;
};

/// How scan_call() ended.
enum class CallScan {
  Found,        ///< `change` accepted a stop
  Bounded,      ///< the call's bound was written (its start going back, the next call going on)
  Ended,        ///< the recording's start or end
  Interrupted,  ///< the user interrupted the move
};

/// Moves `tl` stop by stop in direction `dir` (backwards, a watchpoint stops just after the
/// write, as a forward one does) until `change(s)` accepts a watchpoint stop `s` of task `tid`
/// that wrote something other than what was there, a write of `bound` (the word that tells one
/// call of a script function from the next at its address) or the recording's start or end.
/// `at` is the last stop. For previous and next change of a Python or an R local.
template <class Change>
CallScan scan_call(Timeline& tl, Direction dir, pid_t tid, uint64_t bound, StopInfo& at,
                   Change&& change) {
  for (;;) {
    at = dir == Direction::Forward ? tl.resume_forward()
                                   : tl.resume_backward(Timeline::WatchStop::AfterWrite);
    if (at.reason == StopReason::Interrupted) return CallScan::Interrupted;
    if (run_ended(at)) return CallScan::Ended;
    if (at.reason != StopReason::Watchpoint || at.tid != tid) continue;
    if (at.addr == bound) return CallScan::Bounded;
    if (at.old_value != at.new_value && change(at)) return CallScan::Found;
  }
}

}  // namespace rwd
