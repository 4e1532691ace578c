// What the script line steppers (python_stepper.h, r_stepper.h) share: write watchpoints on
// an interpreter's 8-byte words, held for one step, and the rules for which stop ends it.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/interp/interp_frame.h"
#include "engine/timeline/timeline.h"

namespace rwd {

/// Write watchpoints on 8-byte words, removed when the step ends.
class StepWatches {
 public:
  /// `what` names the step in the error when no debug register is free ("Python lines").
  StepWatches(Timeline& tl, std::string what) : tl_(tl), what_(std::move(what)) {}
  ~StepWatches() { clear(); }
  StepWatches(const StepWatches&) = delete;
  StepWatches& operator=(const StepWatches&) = delete;
  /// Watches `word` (0 and words already watched are ignored); throws Error when the
  /// timeline has no debug register left for it.
  void add(uint64_t word) {
    if (!word || watches(word)) return;
    if (!tl_.add_watchpoint(word, 8, WatchKind::Write))
      throw Error("cannot step by " + what_ +
                  ": no debug register is free (remove a data breakpoint)");
    words_.push_back(word);
  }
  void remove(uint64_t word) {
    auto it = std::find(words_.begin(), words_.end(), word);
    if (it == words_.end()) return;
    tl_.remove_watchpoint(word, 8, WatchKind::Write);
    words_.erase(it);
  }
  void clear() {
    for (uint64_t w : words_) tl_.remove_watchpoint(w, 8, WatchKind::Write);
    words_.clear();
  }
  bool watches(uint64_t word) const {
    return std::find(words_.begin(), words_.end(), word) != words_.end();
  }
  const std::vector<uint64_t>& words() const { return words_; }

 private:
  Timeline& tl_;
  std::string what_;
  std::vector<uint64_t> words_;
};

/// A backward line step's scan of a frame's starts of code (instructions, statements), met
/// from a point on line `current` going back: the first start on another line is the previous
/// line's last; the first on yet another line comes just before the previous line's run, whose
/// first start is the one to step back to (the frame's next start forward from there).
struct PreviousLineScan {
  int current = 0;
  bool found = false;  ///< the previous line was met
  int previous = 0;    ///< its number, once found
  /// Notes a start on `line`; true when it comes before the previous line's run.
  bool before_previous(int line) {
    if (!found) {
      found = line != current;
      previous = line;
      return false;
    }
    return line != previous;
  }
};

/// Whether a script stack read at a stop can be stepped from: a first frame, read whole.
inline bool readable(const std::vector<InterpFrame>& st) {
  return !st.empty() && st[0].error.empty();
}

/// A stop at one of the step's own watchpoints (or a single step over a watched write),
/// reported as the step's end.
inline StopInfo landed(StopInfo s) {
  if (s.reason == StopReason::Watchpoint) s.reason = StopReason::Step;
  return s;
}

/// The 8-byte little-endian value of a watchpoint's old or new bytes.
inline uint64_t word_value(const std::vector<uint8_t>& bytes) {
  uint64_t v = 0;
  std::memcpy(&v, bytes.data(), std::min(bytes.size(), sizeof v));
  return v;
}

/// Whether stop `s` ends a script step early: a user watchpoint (not one of `words`), a user
/// breakpoint for which `user_breakpoint(tid, addr)` holds, a signal, either end of the
/// trace, an interrupt. The step's own watchpoint hits and code-mapping stops do not.
inline bool ends_script_step(const StopInfo& s, const std::vector<uint64_t>& words,
                             const std::function<bool(pid_t, uint64_t)>& user_breakpoint) {
  switch (s.reason) {
    case StopReason::Watchpoint:
      return std::find(words.begin(), words.end(), s.addr) == words.end();
    case StopReason::Breakpoint:
      return user_breakpoint(s.tid, s.addr);
    case StopReason::CodeMapped:
      return false;
    default:
      return true;
  }
}

}  // namespace rwd
