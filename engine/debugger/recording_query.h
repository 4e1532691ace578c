// What the queries over a whole recording share (value_history.h, hit_history.h): a second
// replay of the trace on its own timeline, which another thread may interrupt, and the forward
// run over the query's range of events, with progress and each stop's place in its interval.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "engine/debugger/debugger.h"
#include "engine/timeline/timeline.h"

namespace rwd {

/// Called now and then during a query with the event reached and the results found so far.
using QueryProgress = std::function<void(uint64_t event, size_t found)>;

/// The base of a query over the recording at a trace directory. One object runs one query.
class RecordingQuery {
 public:
  /// The most results a query collects: one that finds more stops there, its answer not
  /// complete (a value written at every pass of a hot loop changes millions of times; a
  /// range of events narrows the question).
  static constexpr size_t kMaxResults = 100'000;

  /// Asks the query (from another thread, before or while it runs) to stop soon; it returns
  /// what it found.
  void interrupt();

 protected:
  explicit RecordingQuery(std::string trace_dir) : trace_dir_(std::move(trace_dir)) {}

  /// A forward run of a new replay of the trace over events [first, last] (last 0: to the
  /// end), registered for interrupt() while it lives.
  class Run {
   public:
    /// Opens the replay (Throws TraceError / DivergenceError as Timeline does) and goes to
    /// the point just after event `first`.
    Run(RecordingQuery& q, uint64_t first, uint64_t last, QueryProgress progress);
    ~Run();
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;
    Timeline& timeline() { return tl_; }
    /// The next stop of the run; nullopt once it left the range, reached the end of the
    /// recording, was interrupted or `found` (the results so far, also for progress) reached
    /// kMaxResults.
    std::optional<StopInfo> next(size_t found);
    /// As next(), with debugger `d` (over timeline()) resuming forwards instead: the stops
    /// of its breakpoints (Python ones too), conditions and hit counts applied.
    std::optional<DebugStop> next(Debugger& d, size_t found);
    /// Counts a stop the query finds again by number (go_to_change, go_to_hit): its place
    /// among those counted since the event it follows (1 = the first).
    uint32_t count() { return ++ordinal_; }
    /// The last event replayed.
    uint64_t reached() const { return event_; }
    /// False when the run ended by an interruption or at kMaxResults rather than at its
    /// range's end.
    bool complete() const { return complete_; }
    /// Whether it stopped at kMaxResults.
    bool truncated() const { return truncated_; }

   private:
    RecordingQuery& q_;
    Timeline tl_;
    uint64_t last_;
    QueryProgress progress_;
    uint64_t event_ = 0;
    uint32_t ordinal_ = 0;
    bool complete_ = true;
    bool truncated_ = false;
    /// Whether the run must stop before replaying on (interrupted, or `found` reached
    /// kMaxResults); says so in complete_ and truncated_.
    bool at_limit(size_t found);
    /// Whether the run may go on after stop `s` (the one next() replayed to).
    bool take(const StopInfo& s, size_t found);
  };

 private:
  std::string trace_dir_;
  std::atomic<bool> interrupted_{false};
  std::atomic<Timeline*> running_{nullptr};
};

/// Goes on `tl` to the point just after event `event`, then forward to the `ordinal`-th
/// stop (1 = the first) after it that `counts` accepts, as RecordingQuery::Run::count
/// numbered a query's results: how a result is found again on the session's timeline.
/// Returns the stop reached; when the replay finds fewer such stops before the next event,
/// the stop where it gave up (the caller checks it is the result's). Throws Error when the
/// event cannot be reached.
StopInfo find_counted_stop(Timeline& tl, uint64_t event, uint32_t ordinal,
                           const std::function<bool(const StopInfo&)>& counts);

/// Tells the stops of a query's forward run that come after a position of the session's
/// timeline (where the user stands, Timeline::position) from those before it. Within the
/// position's own event interval, where event numbers cannot tell, a breakpoint at the
/// position's instruction finds the pass whose registers and memory are the position's
/// (Timeline::at_position).
class PositionSplit {
 public:
  /// `tl`: the query's timeline (a run from before the position); `p`: the position;
  /// `site`: the code site of p's instruction, taken on the session's timeline (where p's
  /// task lives; nullopt for a position that is not a Trap). A breakpoint the query has at
  /// `shared` already is not added or removed a second time.
  PositionSplit(Timeline& tl, const TimelinePosition& p, std::optional<CodeSite> site,
                const std::optional<CodeSite>& shared);
  ~PositionSplit();
  PositionSplit(const PositionSplit&) = delete;
  PositionSplit& operator=(const PositionSplit&) = delete;

  /// Whether stop `s` lies after the position. Give it each stop of the run, in order (the
  /// breakpoint's stops too): the stop that is the position itself is not after it. The
  /// breakpoint is armed only in the position's interval (the run stops just after its
  /// event, reason Seek, for that: Timeline::set_stop_after_event), and taken out once the
  /// position is passed: an instruction of an interpreter's eval loop runs millions of times.
  bool after(const StopInfo& s);
  /// Whether stop `s`, in the position's interval, is the position itself (then the
  /// breakpoint is taken out). For after(), and for a run that goes there (go_to_position).
  bool reached(const StopInfo& s);

 private:
  void arm();
  void disarm();
  Timeline& tl_;
  TimelinePosition p_;
  std::optional<CodeSite> site_;  ///< the position's instruction (nullopt: not a Trap)
  bool owned_ = false;            ///< whether this adds and removes the breakpoint
  bool armed_ = false;
  uint64_t rip_ = 0;
  bool passed_ = false;
};

/// Whether a forward or backward run stopped at an end of the recording or was interrupted.
inline bool run_ended(const StopInfo& s) {
  return s.reason == StopReason::TraceEnd || s.reason == StopReason::TraceStart ||
         s.reason == StopReason::Interrupted;
}

}  // namespace rwd
