// The timeline's vocabulary: why it stopped, where, and what it holds. Shared by the
// timeline's facade (timeline.h), its replay controller and everything above it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/arch/registers.h"
#include "engine/ticks/memory_digest.h"

namespace rwd {

/// Where a timeline stands, in terms that another timeline of the same trace recognises when
/// it passes there (Timeline::position, Timeline::at_position): an execution point without
/// counters (DESIGN.md, "Ticks, preemption and asynchronous signals").
struct TimelinePosition {
  enum Kind : uint8_t {
    Between,  ///< just after event `event`, before any task ran on
    Entry,    ///< task `tid` at the entry of a syscall, `event` the last one replayed
    Trap,     ///< task `tid` between events, after `event`: its registers and memory say where
  } kind = Between;
  uint64_t event = 0;
  pid_t tid = 0;
  Registers regs{};       ///< Trap: the task's registers there
  MemoryDigest digest{};  ///< Trap: its process's memory there (dead stacks left out)
};

/// Why the timeline stopped.
enum class StopReason : uint8_t {
  Breakpoint,     ///< a software breakpoint at `addr` was hit (rip = addr)
  Watchpoint,     ///< a watched range at `addr` was written (or read, for ReadWrite)
  Step,           ///< a single instruction step finished
  Signal,         ///< the task is about to receive `signo` (as recorded: a fault or a kill)
  Seek,           ///< a seek reached its event
  TraceStart,     ///< the start of the recording (the program's first instruction)
  TraceEnd,       ///< the end of the recording (the last process is exiting or gone)
  Interrupted,    ///< interrupt() stopped a running operation
  CodeMapped,     ///< new code was mapped: an exec, or mmap/mprotect with PROT_EXEC
                  ///< (only with set_stop_at_code_mappings)
  Forked,         ///< task `tid` made process `child` (fork, vfork, clone without
                  ///< CLONE_THREAD); only with set_stop_at_process_events
  Execed,         ///< task `tid`'s process ran an exec; only with set_stop_at_process_events
  ProcessExited,  ///< the last task of process `pid` ended, task `tid` (exited: no registers),
                  ///< while other processes live on; only with set_stop_at_process_events
};

/// A stop: what happened, to which task (recorded tid), and where in the trace.
struct StopInfo {
  StopReason reason = StopReason::TraceStart;
  pid_t tid = 0;       ///< recorded tid of the task that stopped
  uint64_t event = 0;  ///< number of the last event replayed (event numbers start at 1)
  uint64_t addr = 0;   ///< Breakpoint: its address; Watchpoint: the watched address
  int signo = 0;       ///< Signal: the signal
  bool fatal = false;  ///< Signal: it ends the process (the recording shows it killed by it)
  std::vector<uint8_t> old_value{}, new_value{};  ///< Watchpoint: the bytes before and after
  pid_t child = 0;                                ///< Forked: recorded pid of the new process
  pid_t pid = 0;   ///< ProcessExited: recorded pid of the process that ended
  int status = 0;  ///< ProcessExited: its raw wait(2) status (WIFEXITED, WIFSIGNALED)
};

/// The checkpoints a timeline holds (docs/how-it-works.md, "Checkpoints").
struct CheckpointStats {
  size_t count = 0;              ///< live checkpoints
  std::vector<pid_t> pids;       ///< their stopped processes (real pids)
  std::vector<uint64_t> events;  ///< the event each was taken after
  size_t inner = 0;              ///< checkpoints inside event intervals (IntervalCheckpoints)
  uint64_t inner_starts = 0;     ///< replays started from one of those so far
  /// Reverse continues' scans whose watchpoints went in late (Run::watch_at_ms) so far.
  uint64_t late_watches = 0;
};

/// A replayed task, by its recorded ids.
struct TaskInfo {
  pid_t tid = 0;  ///< recorded thread id
  pid_t pid = 0;  ///< recorded process id
  /// The file name of the program its process runs at this point (after its last exec
  /// so far); empty when it cannot be read.
  std::string program;
};

/// How front ends name a task: "PROGRAM [PID/TID]" with its recorded ids (DAP's threads,
/// gdb's `info threads`), "task [PID/TID]" when the program is unknown.
inline std::string task_display_name(const TaskInfo& t) {
  return (t.program.empty() ? std::string("task") : t.program) + " [" + std::to_string(t.pid) +
         "/" + std::to_string(t.tid) + "]";
}

}  // namespace rwd
