// Record & Debug: a DAP launch in "record" mode runs the program under `rewind record`, with
// the launch's cwd, env and arguments: in a child process whose output streams to the client,
// or in the client's terminal (DAP runInTerminal).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rwd {

/// What a recording made.
struct ProgramRecording {
  std::string program;    ///< the program as found (absolute, or as searched in PATH)
  std::string trace_dir;  ///< the new trace (latest-trace points at it)
  int exit_code = 0;      ///< the program's exit status, or 128+signal when it was killed
};

/// Receives the program's output: category "stdout" or "stderr" (DAP OutputEvent), text.
using OutputSink = std::function<void(const std::string& category, const std::string& text)>;

/// How a launch's program is to be recorded.
struct RecordingPlan {
  std::string program;            ///< as the launch names it
  std::string path;               ///< the executable found for it
  std::string cwd;                ///< where it runs
  nlohmann::json env;             ///< the launch's changes: name -> string, or null to remove
  std::string traces_root;        ///< where latest-trace lives
  std::string trace_dir;          ///< the new, empty trace directory
  std::vector<std::string> argv;  ///< rewind record -o trace_dir -- path args...
};

/// Checks a launch's arguments and makes the trace directory: `args` has "program"
/// (required), "args" (array of strings), "cwd" (default: rewind's), "env" (object: a string
/// sets a variable, null removes it). Throws RequestError when the program or cwd does not
/// exist or an argument has the wrong type.
RecordingPlan plan_recording(const nlohmann::json& args, const std::string& rewind_exe);

/// How long a recording stopped by the client's disconnect (SIGTERM, which `rewind record`
/// passes to the program) may go on before the adapter sends the second SIGTERM, which ends
/// it whatever the program does (a program that ignores SIGTERM).
inline constexpr std::chrono::seconds kRecordingStopGrace{3};

/// Stops a recording whose client went away. DapSession::on_client_gone sends the recorder
/// its first SIGTERM when it knows the pid; this sends one more after each
/// kRecordingStopGrace, two at most, so that the second (with which `rewind record` ends
/// the recording whatever the program does) comes even when the first was lost, and no two
/// come at once (a second SIGTERM right after the first would kill a program that was
/// stopping).
class RecordingStopper {
 public:
  /// Called at each poll of the recorder `pid` (0: not known yet) while it runs.
  void poll(pid_t pid, bool abandoned);

 private:
  std::optional<std::chrono::steady_clock::time_point> since_;  ///< abandoned first seen
  int sent_ = 0;
};

/// Runs the plan's `rewind record` as a child with stdin from /dev/null, passing its stdout
/// and stderr to `output` as they come. `child` holds the recorder's pid while it runs (so
/// that a disconnect can stop it with SIGTERM; the trace is kept); once `abandoned` (the
/// client went away), RecordingStopper ends it.
/// Throws Error when recording failed without leaving a trace.
ProgramRecording record_for_client(const RecordingPlan& plan, std::atomic<pid_t>& child,
                                   const OutputSink& output, const std::atomic<bool>& abandoned);

/// Sends a DAP runInTerminal request with these arguments and waits for its answer; throws
/// RequestError when the client refuses.
using TerminalRunner = std::function<void(const nlohmann::json& run_in_terminal_args)>;

/// Has the client run the plan's `rewind record` in its terminal (`kind` "integrated" or
/// "external", as in DAP's RunInTerminalRequestArguments), with `--status-file` added, and
/// follows that file until the recording ends (recording_status.h). The program's stdio is
/// the terminal's. `child` holds the recorder's pid once it is known. When `abandoned` is
/// set (the client disconnected) before the recorder started, gives up; after, waits for the
/// recorder (stopped by SIGTERM: RecordingStopper) to finish the trace. Throws
/// Error when the terminal did not start it within 30 s, or the recording failed without a trace.
ProgramRecording record_in_terminal(const RecordingPlan& plan, const std::string& kind,
                                    const TerminalRunner& run_in_terminal,
                                    std::atomic<pid_t>& child, const std::atomic<bool>& abandoned);

}  // namespace rwd
