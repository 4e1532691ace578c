// What a trace says about its recording as a whole: the command, its environment, and
// (once recording ended normally) the process list and stream sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rwd {

/// Written when recording starts (file `meta`).
struct TraceMeta {
  std::vector<std::string> argv;  ///< the recorded command line, argv[0] as given
  std::vector<std::string> env;   ///< the environment, "NAME=value"
  std::string cwd;                ///< working directory at record time
  std::string exe_file;           ///< saved copy of the first executable under files/
  std::string ticks = "none";     ///< ticks source used: "none" (no counter) or "hw"
  int64_t start_time = 0;         ///< wall clock at record start, seconds since the epoch
  uint64_t sig_ignored = 0;       ///< signals ignored when the program started (bit n-1 = n)
  uint64_t sig_blocked = 0;       ///< signal mask when the program started
};

/// One process of the recorded tree, for `rewind ps`.
struct ProcessInfo {
  int32_t pid = 0;   ///< recorded pid
  int32_t ppid = 0;  ///< recorded parent pid (0 for the first process)
  bool ended = false;
  int32_t status = 0;             ///< raw wait status when ended
  std::vector<std::string> argv;  ///< command line after its last exec
};

/// Written when recording ends normally (file `processes`); its presence marks a complete
/// trace, and the stream sizes let the reader tell a truncated file from a short recording.
struct TraceSummary {
  uint64_t events = 0;        ///< number of events, the End event included
  uint64_t events_bytes = 0;  ///< size of the events file
  uint64_t data_bytes = 0;    ///< size of the data file
  int32_t root_status = 0;    ///< raw wait status of the first process
  std::vector<ProcessInfo> processes;
};

/// Exit code a shell reports for a raw wait status: the exit status, or 128+signal.
int exit_code_for_status(int status);

}  // namespace rwd
