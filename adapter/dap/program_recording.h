// Record & Debug: a DAP launch in "record" mode runs the program under `rewind record` in a
// child process, with the launch's cwd, env and arguments, and streams its output to the
// client while it runs.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace rwd {

/// What a recording made.
struct ProgramRecording {
  std::string program;    ///< the program as found (absolute, or as searched in PATH)
  std::string trace_dir;  ///< the new trace (latest-trace points at it)
  int exit_code = 0;      ///< the program's exit status, or 128+signal when it was killed
};

/// Receives the program's output: category "stdout" or "stderr" (DAP OutputEvent), text.
using OutputSink = std::function<void(const std::string& category, const std::string& text)>;

/// Records the program a DAP launch names: `args` has "program" (required), "args" (array of
/// strings), "cwd" (default: rewind's), "env" (object: a string sets a variable, null
/// removes it). Runs `rewind_exe record -o DIR -- program args...` with stdin from /dev/null
/// and its stdout and stderr passed to `output` as they come. `child` holds the recorder's
/// pid while it runs (so that a disconnect can stop it with SIGTERM; the trace is kept).
/// Throws RequestError when the program or cwd does not exist, Error when recording failed
/// without leaving a trace.
ProgramRecording record_for_client(const nlohmann::json& args, const std::string& rewind_exe,
                                   std::atomic<pid_t>& child, const OutputSink& output);

}  // namespace rwd
