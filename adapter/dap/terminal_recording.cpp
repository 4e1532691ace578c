// Record & Debug in the client's terminal (DAP runInTerminal): the terminal runs
// `rewind record --status-file FILE`, and the adapter follows FILE.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "adapter/dap/program_recording.h"
#include "adapter/dap/recording_status.h"
#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/trace/trace_dir.h"

namespace rwd {

using nlohmann::json;

namespace {

/// How long a terminal may take to start `rewind record` after the client said it runs it.
constexpr auto kStartTimeout = std::chrono::seconds(30);
constexpr auto kPollInterval = std::chrono::milliseconds(50);

/// A private directory for the status file, removed with what is in it.
class StatusDir {
 public:
  StatusDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/rewind-dap-XXXXXX";
    if (!::mkdtemp(templ.data())) throw_errno("mkdtemp " + templ);
    dir_ = templ;
  }
  ~StatusDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string file() const { return dir_ + "/status"; }

 private:
  std::string dir_;
};

/// True when process `pid` has ended: gone, or a zombie its parent has not reaped yet
/// (proc(5): the state after the command name in /proc/PID/stat).
bool ended(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  char state = proc_task_state(pid);
  return state == '\0' || state == 'Z' || state == 'X';
}

}  // namespace

ProgramRecording record_in_terminal(const RecordingPlan& plan, const std::string& kind,
                                    const TerminalRunner& run_in_terminal,
                                    std::atomic<pid_t>& child, const std::atomic<bool>& abandoned) {
  StatusDir status_dir;
  std::string status_file = status_dir.file();
  std::vector<std::string> argv = plan.argv;
  argv.insert(argv.begin() + 2, {"--status-file", status_file});
  // A recording that never started leaves no empty trace behind.
  auto drop_empty_trace = [&] {
    if (is_empty_dir(plan.trace_dir)) ::rmdir(plan.trace_dir.c_str());
  };
  auto give_up = [&](const std::string& why) {
    drop_empty_trace();
    return Error(why);
  };
  try {
    run_in_terminal({{"kind", kind},
                     {"title", "rewind record " + plan.program},
                     {"cwd", plan.cwd},
                     {"args", argv},
                     {"env", plan.env}});
  } catch (...) {
    drop_empty_trace();
    throw;
  }

  auto asked = std::chrono::steady_clock::now();
  pid_t pid = 0;
  RecordingStopper stopper;
  for (;;) {
    std::optional<RecordingStatus> s = read_recording_status(status_file);
    if (s && s->state == RecordingStatus::Recording && !pid) child = pid = s->pid;
    if (s && s->state == RecordingStatus::Failed)
      throw give_up("recording " + plan.program + " failed: " + s->error);
    if (s && s->state == RecordingStatus::Finished) {
      child = 0;
      ProgramRecording rec;
      rec.program = plan.path;
      rec.trace_dir = s->trace;
      rec.exit_code = s->exit_code;
      set_latest_trace(plan.traces_root, rec.trace_dir);
      return rec;
    }
    if (!pid) {
      if (abandoned) throw give_up("the client went away before the recording started");
      if (std::chrono::steady_clock::now() - asked > kStartTimeout)
        throw give_up("the client's terminal did not start `rewind record` within 30 s");
    } else {
      stopper.poll(pid, abandoned);
      if (ended(pid)) {
        s = read_recording_status(status_file);
        if (!s || s->state == RecordingStatus::Recording) {
          child = 0;
          throw give_up("`rewind record` (pid " + std::to_string(pid) +
                        ") ended without finishing the trace");
        }
        continue;  // it finished just now: the next round reads the result
      }
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace rwd
