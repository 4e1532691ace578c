// A replay that the timeline drives (rr's ReplaySession::replay_step is the model): run()
// advances it to the next thing its driver must decide or know, and returns it; nothing in
// the replay calls up.
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

/// Why ReplaySession::run() returned: a question for its driver, answered in the next
/// RunCommand, or news.
struct ReplayStep {
  enum Kind : uint8_t {
    /// `task` is about to run the program's own code towards its next event with `request`
    /// (PTRACE_SYSEMU). Answer: RunCommand::request (a single step, for instance).
    Resume,
    /// `task` stopped with `stop` while running the program's own code. Answer:
    /// RunCommand::claimed, when the stop was the driver's (its breakpoint, watchpoint or
    /// single step, handled): the replay then resumes the task as it meant to; otherwise the
    /// replay takes the stop as its own (a syscall's entry, a recorded signal, the point's
    /// trap). Stop::BufferPause is news only (the task used `stop.status` bytes of its
    /// buffered records): its answer is not read.
    Stopped,
    /// The replay wants to replace `len` bytes of code at `addr` in `task`'s process with a
    /// jump to a point trampoline (reach_point.h) and then run the task. Answer:
    /// RunCommand::patch_allowed (refuse while single-stepping, watching memory, or with a
    /// breakpoint in those bytes).
    PatchRequest,
    /// `event` has been replayed: events_done() is its number.
    EventDone,
    /// The trace has no more events.
    End,
  } kind = End;
  ReplayTask* task = nullptr;    ///< Resume, Stopped, PatchRequest: the task (lives as long
                                 ///< as the session has it)
  int request = 0;               ///< Resume: the ptrace request the replay would use
  Stop stop;                     ///< Stopped
  uint64_t addr = 0;             ///< PatchRequest
  size_t len = 0;                ///< PatchRequest, bytes
  const Event* event = nullptr;  ///< the event being replayed (EventDone: the one just done);
                                 ///< valid until the next run()
};

/// The driver's answer to the last ReplayStep, and so what run() does next.
struct RunCommand {
  int request = 0;            ///< after Resume: resume with this request (0: as asked)
  bool claimed = false;       ///< after Stopped: the stop was the driver's own
  bool patch_allowed = true;  ///< after PatchRequest
  /// After Resume: when this asks for it, the task is stopped where it runs
  /// (Stop::Interrupted, a ReplayStep::Stopped that the driver must claim); default: never.
  InterruptWhen interrupt;
};

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

  /// Advances the replay, first acting on `cmd` (the answer to the last step), to the next
  /// step its driver must answer or know of. Throws DivergenceError, TraceError; after a
  /// throw the session is finished (tasks killed).
  ReplayStep run(const RunCommand& cmd = {});
  /// Replays the next event without a driver (every question answered by default); returns
  /// false, doing nothing, when the trace has no more. Throws as run().
  bool step();
  /// The event after the one being replayed (or the next one, between events), or nullptr at
  /// the end of the trace.
  const Event* next_event();
  /// True while a point trampoline is patched into a task's code (ReplayStep::PatchRequest):
  /// the program then runs some of its instructions elsewhere.
  bool code_patched() const;
  /// True while the replay looks for task `rec_tid`'s point at instruction `rip` with a
  /// hardware breakpoint (PointSearch::waits_at): a driver that single-steps the task onto
  /// `rip` leaves that stop unclaimed (RunCommand::claimed), so that the search checks it.
  bool point_search_waits_at(pid_t rec_tid, uint64_t rip) const;
  /// True while process `pid` (a real pid of this replay) is between its library's
  /// registration that announced libc's patching and the end of it (ReplayTask::
  /// patching_libc): a debugger keeps its breakpoints out of that process's libc text then.
  bool patching_code(pid_t pid) const;
  /// Number of the last event replayed (events are numbered from 1; 0 before the first).
  uint64_t events_done() const;
  /// The live tasks, by recorded tid.
  const std::map<pid_t, ReplayTask>& tasks() const;
  const TraceReader& trace() const;
  /// Copies every live replayed process now, between events, each with all its threads
  /// (process_copy.h). Returns nullptr when that is not possible: a task inside a real fork
  /// or sharing its parent's memory (vfork), a process whose first thread (which forks) has
  /// ended or has run no `syscall` instruction yet, or memory mapped shared and writable
  /// (its copy would share the pages the replay goes on changing). Call only between
  /// step()s.
  CheckpointPtr checkpoint();
  /// A checkpoint in the middle of the event in progress: the task replaying it has run
  /// part of the way to it (stopped by an interrupt) and every other task waits as between
  /// events. A replay from it continues that event's replay where the task stands. nullptr
  /// where checkpoint() would give none, and while a point trampoline is patched in, after
  /// the reader read past the event in progress, or outside an event.
  CheckpointPtr checkpoint_between();
  /// A copy of the replayed process as it stands now, even in the middle of an event, to
  /// change and run freely and then throw away (a "diversion"); it cannot restart a replay.
  /// nullptr when the process cannot be copied (as checkpoint()).
  CheckpointPtr diversion();
  /// The event a checkpoint was taken after.
  static uint64_t checkpoint_event(const Checkpoint& c);
  /// The real pids of a checkpoint's stopped processes.
  static std::vector<pid_t> checkpoint_pids(const Checkpoint& c);
  /// The copy of task `rec_tid` in checkpoint `c` (its real pid and tid there), or nullptr
  /// when that task is not live in it.
  static const ReplayTask* checkpoint_task(const Checkpoint& c, pid_t rec_tid);
  /// Asks that task `rec_tid`, replaying up to event `event` (its own, carrying buffered
  /// records), pause once it has used `pos` bytes of that event's records (a record
  /// boundary): run() then reports a Stop::BufferPause there (buffer_fill.h). One request
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
