// The trace's processes as one gdb connection sees them (gdb manual, "Remote Protocol":
// the multiprocess extensions, fork and exec events in stop replies, "D;PID"): which ones
// gdb has been told of and which it has detached, and how their threads are named. Each
// process is an inferior of its own in gdb, with the symbols of the program it runs.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/timeline/timeline.h"

namespace rwd::gdb {

/// Process bookkeeping of one gdb session.
class GdbProcesses {
 public:
  explicit GdbProcesses(Timeline& tl) : tl_(tl) {}

  /// Takes gdb's qSupported features; returns the ones this server adds to its reply
  /// (";multiprocess+;fork-events+;exec-events+", each only when gdb offered it). Turns
  /// the timeline's process-event stops on when gdb takes fork or exec events.
  std::string negotiate(std::string_view features);
  bool multiprocess() const { return multiprocess_; }

  /// The live tasks gdb is to see: every one, or with fork events those of the processes
  /// gdb has been told of and has not detached. Also notes each task's process.
  std::vector<TaskInfo> tasks();
  /// The first task gdb sees of recorded process `pid`, or 0.
  pid_t first_task_of(pid_t pid);
  /// The recorded process of task `tid` (the last one known for an ended task; the tid
  /// itself for a task never seen).
  pid_t pid_of(pid_t tid);
  /// Task `tid` as gdb names it: "pPID.TID" with the multiprocess extensions, else "TID".
  std::string thread_id(pid_t tid);
  /// gdb detached process `pid` ("D;PID", as with `detach-on-fork on`): it is not shown
  /// again, and the runs go on through its stops.
  void detach(pid_t pid) {
    detached_.insert(pid);
    announced_.erase(pid);
  }

  /// /proc/PID[/task/TID]/NAME of a process gdb sees, by recorded ids (tid 0: the
  /// process's), for the vFile packets: "maps" (as the kernel writes it, with the device
  /// numbers 00:00) and "exe" (the trace's saved copy of its program); nothing otherwise.
  std::optional<std::string> proc_file(pid_t pid, pid_t tid, std::string_view name);

  /// The stop reply for `stop` of a run, or nothing when gdb is not to see this stop and
  /// the run must go on: a stop in a process gdb detached, a fork or exec event gdb did not
  /// ask for, a fork of a process gdb already knows (a run forwards again after going
  /// back). The first stop in a process gdb was never told of (reached by going back or
  /// by a seek) is answered with a fork event from the session's first process, and
  /// `stop` is left in `held` for the next run to report without moving.
  /// A process gdb was told of that has ended (a ProcessExited stop) is answered with its
  /// exit ("W" or "X" with ";process:PID", gdb manual, "Stop Reply Packets"), and gdb then
  /// forgets it as it does a native child it reaped. So is one that has ended by any other
  /// stop (a step or a seek went past its end), that stop held.
  /// A process announced so whose program is not its announcer's (it ran an exec) is then
  /// announced with an exec event too, the stop still held.
  std::optional<std::string> reply(const StopInfo& stop, WatchKind watch_kind,
                                   std::optional<StopInfo>& held);
  /// The recorded pid of the process the last reply was an exec event of (0: none): gdb
  /// inserts that program's breakpoints afresh.
  pid_t last_exec() const { return last_exec_; }

 private:
  Timeline& tl_;
  bool multiprocess_ = false, fork_events_ = false, exec_events_ = false;
  std::map<pid_t, pid_t> pid_of_;        ///< recorded tid -> recorded pid, of every task seen
  std::set<pid_t> announced_;            ///< processes gdb was told of (fork events only)
  std::set<pid_t> detached_;             ///< processes gdb detached
  pid_t first_process_ = 0;              ///< the process gdb started with
  std::map<pid_t, uint64_t> seen_live_;  ///< announced process -> last stop's event it lived at
  pid_t exec_pending_ = 0;               ///< announced by a fork event; its exec is to follow
  pid_t last_exec_ = 0;                  ///< see last_exec()

  /// The stop reply that tells gdb recorded process `pid` ended, with wait status `status`
  /// (exit 0 when the trace does not say); gdb is told of it no more.
  std::string exit_reply(pid_t pid, std::optional<int> status);
};

}  // namespace rwd::gdb
