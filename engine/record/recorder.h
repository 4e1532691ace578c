// `rewind record`: runs a program under ptrace and writes its trace (DESIGN.md "Recording").
#pragma once

#include <string>
#include <vector>

namespace rwd {

/// What to record and where.
struct RecordOptions {
  std::vector<std::string> argv;  ///< program and arguments; argv[0] is searched in PATH
  std::string output_dir;         ///< -o DIR: the trace directory; empty = NAME-N under root
  bool verbose = false;           ///< -v: say where the trace went and how many events
  bool chaos = false;             ///< --chaos: random time slices and scheduling order
  uint64_t chaos_seed = 0;        ///< seed of the chaos schedule (0: random)
  /// Syscall buffering (preload/README.md): librewind_preload.so makes common syscalls
  /// without a ptrace stop. On unless --no-syscall-buffer; without the library next to
  /// rewind, the recording says so and traces every syscall.
  bool syscall_buffer = true;
  /// --wait: record until every recorded process has ended. Without it the recording ends
  /// with the first process, as rr's does: processes it left running (a daemon) are killed,
  /// and their ends (SIGKILL) are recorded.
  bool wait_all = false;
};

/// The outcome of a recording.
struct RecordResult {
  std::string trace_dir;
  int exit_code = 0;         ///< the program's exit status, or 128+signal
  uint64_t events = 0;       ///< number of events written
  uint64_t preemptions = 0;  ///< Sched events: tasks interrupted to let another run
  /// Interrupts that did not preempt (a tick later instead) because replay could not have
  /// found the point with a trampoline (point_trampoline_fits).
  uint64_t put_off_preemptions = 0;
  /// Asynchronous signals delivered a few instructions after they arrived: inside a string
  /// instruction, or where replay could not have found the point with a trampoline.
  uint64_t put_off_signals = 0;
  /// Single steps that took such a signal past a branch (a conditional jump, a return, an
  /// indirect call or jump) whose target was known only once it had run.
  uint64_t branch_steps = 0;
  /// Single steps made before preemptions to leave a short loop's instruction whose
  /// registers repeat at every pass (RecordSession::step_to_distinct_point).
  uint64_t point_steps = 0;
  /// Preemptions that these steps moved to an instruction whose registers vary by pass.
  uint64_t moved_points = 0;
  /// Timer expiries held back so that the task could run between two (hold_timer_expiry).
  uint64_t held_expiries = 0;
  uint64_t ptrace_stops = 0;       ///< stops of recorded tasks that the recorder waited for
  uint64_t buffered_syscalls = 0;  ///< syscalls made without a stop (preload/), in records
  uint64_t aborted_calls = 0;      ///< buffered calls that waited, made again traced
  /// Writes into /proc/PID/mem that waited for a running task of the written process to be
  /// preempted (proc_mem_writes.cpp).
  uint64_t held_writes = 0;
  /// Processes of separate turns that came to share memory by mapping it each for itself
  /// (mmap of one file MAP_SHARED, shmat, mprotect to writable), whose turns were merged
  /// (shared_mappings.cpp).
  uint64_t joined_turns = 0;
  uint64_t peak_memory = 0;  ///< the recorder's own peak resident set, in bytes
};

/// Records argv[0] with its arguments in the current directory and environment, its stdio
/// being the caller's. Throws Error (program not found: UsageError-like message), and
/// UnsupportedError when the program does something rewind cannot record yet; the trace
/// written so far is kept and replays up to that point.
RecordResult record(const RecordOptions& opts);

/// Finds `name` like execvp(3): as a path when it contains '/', else in $PATH.
/// Returns "" when there is no such executable.
std::string find_program(const std::string& name);

}  // namespace rwd
