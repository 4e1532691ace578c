// A replay that advances one event at a time: what the timeline drives.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <vector>

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
  /// A forked copy of the replayed process at a point between events, to start replays
  /// from later. Owns the stopped copy (killed when destroyed). Opaque.
  struct Checkpoint;
  /// Destroys a checkpoint (kills and reaps its process).
  struct CheckpointDeleter {
    void operator()(Checkpoint* c) const;
  };
  using CheckpointPtr = std::unique_ptr<Checkpoint, CheckpointDeleter>;

  /// Opens the trace; the program starts with the first step(). Throws TraceError.
  explicit ReplaySession(const ReplayOptions& opts);
  /// Continues from checkpoint `c` (which stays usable): a new fork of its process, the
  /// trace read up to its event. Throws TraceError, DivergenceError.
  ReplaySession(const ReplayOptions& opts, const Checkpoint& c);
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
  /// Forks the replayed process now, between events. Returns nullptr when that is not
  /// possible: more than one live task (fork copies only the calling thread), or a task in
  /// the middle of an event. Call only between step()s.
  CheckpointPtr checkpoint();
  /// A copy of the replayed process as it stands now, even in the middle of an event, to
  /// change and run freely and then throw away (a "diversion"); it cannot restart a replay.
  /// nullptr when the process cannot be copied (threads, several processes).
  CheckpointPtr diversion();
  /// The event a checkpoint was taken after.
  static uint64_t checkpoint_event(const Checkpoint& c);
  /// The real pids of a checkpoint's stopped processes.
  static std::vector<pid_t> checkpoint_pids(const Checkpoint& c);
  /// Asks that task `rec_tid`, replaying up to event `event` (its own, carrying buffered
  /// records), pause once it has used `pos` bytes of that event's records (a record
  /// boundary): the observer then sees a Stop::BufferPause there (buffer_fill.h). One request
  /// at a time; `pos` 0 withdraws it. Takes effect when the event's records are put in place,
  /// so ask before the event before it is replayed. Only for a task that can_pause_buffer.
  void pause_in_buffer(pid_t rec_tid, uint64_t event, uint32_t pos);
  /// Whether live task `rec_tid`'s syscall buffer library can pause between its records
  /// (RWD_FEATURE_PAUSE; libraries of older traces cannot).
  bool can_pause_buffer(pid_t rec_tid) const;
  /// Totals so far (exit code from the trace's summary).
  ReplayResult result() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rwd
