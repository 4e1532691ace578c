// `rewind record --until-failure[=N]`: record again and again until the bug shows up.
#pragma once

#include "engine/record/recorder.h"

namespace rwd {

/// The outcome of recording until a failure.
struct UntilFailureResult {
  RecordResult last;    ///< the failing recording (or the last successful one)
  int runs = 0;         ///< recordings made
  bool failed = false;  ///< the program exited non-zero or died from a signal in the last run
};

/// Records `opts` up to `max_runs` times, stopping at the first run whose exit status is not
/// 0. Traces of successful runs are deleted, so only the failing one is kept (latest-trace
/// points at it). Throws what record() throws.
UntilFailureResult record_until_failure(const RecordOptions& opts, int max_runs);

}  // namespace rwd
