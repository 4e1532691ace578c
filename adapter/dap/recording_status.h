// The status file of `rewind record --status-file FILE`: how a recording started in a terminal
// the adapter does not own (DAP runInTerminal) tells the adapter how it is going.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace rwd {

/// One state of a recording, as written to its status file (a JSON object):
/// {"state":"recording","pid":P} once `rewind record` runs, then either
/// {"state":"finished","exit_code":N,"trace":DIR[,"error":MESSAGE]} (a trace was made; with
/// "error" when recording stopped early and the trace ends there) or
/// {"state":"failed","error":MESSAGE} (no trace).
struct RecordingStatus {
  enum State { Recording, Finished, Failed } state = Recording;
  pid_t pid = 0;      ///< the `rewind record` process (Recording)
  int exit_code = 0;  ///< the program's exit status, 128+signal if killed (Finished)
  std::string trace;  ///< the trace directory (Finished)
  std::string error;  ///< rewind's one-line message (Failed; Finished early)
};

/// Replaces `path` with `status` atomically (a temporary file renamed over it), so that a
/// reader never sees half a file. Throws Error when the file cannot be written.
void write_recording_status(const std::string& path, const RecordingStatus& status);

/// The status in `path`, or nullopt while the file does not exist yet. Throws Error when it
/// exists but is not a recording status.
std::optional<RecordingStatus> read_recording_status(const std::string& path);

}  // namespace rwd
