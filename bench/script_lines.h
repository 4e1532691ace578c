// Helpers shared by the script-breakpoint benchmarks under bench/ (python_breakpoints,
// r_breakpoints): lines of a workload named by a marker in their text, a line breakpoint's
// spec, and a replay to the end.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "engine/debugger/debugger.h"

namespace rwd::bench {

/// The 1-based line of `file` holding `marker`, 0 when none does.
inline int line_of(const char* file, const std::string& marker) {
  std::ifstream in(file);
  std::string text;
  for (int n = 1; std::getline(in, text); ++n)
    if (text.find(marker) != std::string::npos) return n;
  return 0;
}

/// A plain breakpoint on line `line` (1-based) of the file it is set in.
inline BreakpointSpec line_spec(int line) {
  BreakpointSpec s;
  s.line = uint32_t(line);
  return s;
}

/// Replays on from where `d` is; whether it ran to the end of the recording (no stop on the
/// way).
inline bool runs_to_end(Debugger& d) {
  return d.resume(Direction::Forward).stop.reason == StopReason::TraceEnd;
}

}  // namespace rwd::bench
