// A replay that advances one event at a time: what the timeline drives.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>

#include "engine/replay/replay_task.h"
#include "engine/replay/replayer.h"
#include "engine/trace/event.h"
#include "engine/trace/trace_reader.h"

namespace rwd {

/// One replay of a trace from its start. Owns the replayed processes: destroying the
/// session kills them. Not thread-safe; all calls from the thread that created it (ptrace
/// ties tracees to one thread).
class ReplaySession {
 public:
  /// Opens the trace; the program starts with the first step(). Throws TraceError.
  explicit ReplaySession(const ReplayOptions& opts);
  ~ReplaySession();
  ReplaySession(const ReplaySession&) = delete;
  ReplaySession& operator=(const ReplaySession&) = delete;

  /// Replays the next event; returns false, doing nothing, when the trace has no more.
  /// Throws DivergenceError, TraceError; after a throw the session is finished (tasks killed).
  bool step();
  /// The next event step() replays, or nullptr at the end of the trace.
  const Event* next_event();
  /// Number of the last event replayed (events are numbered from 1; 0 before the first).
  uint64_t events_done() const;
  /// The live tasks, by recorded tid.
  const std::map<pid_t, ReplayTask>& tasks() const;
  const TraceReader& trace() const;
  /// Totals so far (exit code from the trace's summary).
  ReplayResult result() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rwd
