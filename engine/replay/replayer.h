// `rewind replay -a`: re-executes a recorded program, reproducing every event
// (DESIGN.md "Replay").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "engine/trace/event.h"

namespace rwd {

/// How to replay.
struct ReplayOptions {
  std::string trace_dir;
  bool echo_output = true;  ///< write the program's recorded stdout/stderr output again
  /// Called with each piece of the program's stdout/stderr output as its write-like event
  /// (number `event`) is replayed; may be empty.
  std::function<void(uint64_t event, OutputStream stream, const std::string& bytes)> on_output;
};

/// The outcome of replaying a trace to its end.
struct ReplayResult {
  int exit_code = 0;         ///< the recorded exit status of the first process (or 128+signal)
  uint64_t events = 0;       ///< events replayed
  bool interrupted = false;  ///< the trace ends early: its recording was interrupted
  uint64_t points = 0;       ///< Sched and asynchronous Signal points reached
  uint64_t point_stops = 0;  ///< ptrace stops spent reaching them (the counter-less cost)
  /// How they were found (reach_point.h): with the register-compare trampoline, or with a
  /// stop at every pass of their instruction (an int3, a hardware breakpoint). The rest of
  /// `points` found their task at the point already.
  uint64_t points_jump = 0, points_int3 = 0, points_breakpoint = 0;
  /// Digests of all writable memory those searches took (PointFound::full_digests).
  uint64_t point_full_digests = 0;
};

/// Replays the whole trace. Throws TraceError for an unreadable trace and DivergenceError
/// when the replay stops matching the recording (naming event, task and first difference).
ReplayResult replay_to_end(const ReplayOptions& opts);

}  // namespace rwd
