#include "adapter/dap/program_recording.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <optional>
#include <vector>

#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_wire.h"
#include "engine/record/recorder.h"
#include "engine/trace/trace_dir.h"

extern char** environ;

namespace rwd {

using nlohmann::json;

namespace {

/// Checks a launch's "env": an object of names to strings or null.
json checked_env(const json& env) {
  if (env.is_null()) return json::object();
  if (!env.is_object())
    throw RequestError("argument \"env\" must be an object of names to strings");
  for (auto& [name, value] : env.items())
    if (!value.is_null() && !value.is_string())
      throw RequestError("env \"" + name + "\" must be a string or null");
  return env;
}

/// The environment the program gets: rewind's, changed as the launch's (checked) "env" says.
std::vector<std::string> launch_environment(const json& env) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (auto& [name, value] : env.items()) {
    if (value.is_null())
      vars.erase(name);
    else
      vars[name] = value.get<std::string>();
  }
  std::vector<std::string> out;
  for (auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

/// Passes whole UTF-8 characters on: a read may end inside one.
class Utf8Stream {
 public:
  std::string take(const char* data, size_t n) {
    pending_.append(data, n);
    size_t keep = 0;  // bytes of an unfinished character at the end
    for (size_t k = 1; k <= 3 && k <= pending_.size(); ++k) {
      auto c = static_cast<unsigned char>(pending_[pending_.size() - k]);
      if ((c & 0xc0) == 0x80) continue;
      size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
      if (len > k) keep = k;
      break;
    }
    std::string out = pending_.substr(0, pending_.size() - keep);
    pending_.erase(0, pending_.size() - keep);
    return valid_utf8(out);
  }
  std::string rest() { return valid_utf8(std::exchange(pending_, {})); }

 private:
  std::string pending_;
};

}  // namespace

RecordingPlan plan_recording(const json& args, const std::string& rewind_exe) {
  RecordingPlan plan;
  std::string program = plan.program = required<std::string>(args, "program");
  std::vector<std::string> argv_in;
  if (args.contains("args")) argv_in = required<std::vector<std::string>>(args, "args");
  char here[4096];
  std::string cwd = optional_arg<std::string>(args, "cwd", getcwd(here, sizeof here) ? here : "/");
  struct stat st;
  if (::stat(cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw RequestError("cwd \"" + cwd + "\" is not a directory");
  std::string path = program;
  if (program.find('/') != std::string::npos && program[0] != '/') path = cwd + "/" + program;
  path = find_program(path);
  if (path.empty()) throw RequestError("cannot find program \"" + program + "\"");
  plan.path = path;
  plan.cwd = cwd;
  plan.env = checked_env(args.value("env", json()));
  plan.traces_root = traces_root();
  plan.trace_dir = create_trace_dir(plan.traces_root, path.substr(path.find_last_of('/') + 1));
  plan.argv = {rewind_exe, "record", "-o", plan.trace_dir, "--", path};
  plan.argv.insert(plan.argv.end(), argv_in.begin(), argv_in.end());
  return plan;
}

void RecordingStopper::poll(pid_t pid, bool abandoned) {
  if (!abandoned || sent_ == 2) return;
  const auto now = std::chrono::steady_clock::now();
  if (!since_) since_ = now;
  if (pid && now - *since_ >= kRecordingStopGrace * (sent_ + 1)) {
    ::kill(pid, SIGTERM);
    ++sent_;
  }
}

ProgramRecording record_for_client(const RecordingPlan& plan, std::atomic<pid_t>& child,
                                   const OutputSink& output, const std::atomic<bool>& abandoned) {
  ProgramRecording rec;
  rec.program = plan.path;
  rec.trace_dir = plan.trace_dir;
  std::vector<std::string> argv = plan.argv, env = launch_environment(plan.env);
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw_errno("pipe");
  pid_t pid = fork();
  if (pid < 0) throw_errno("fork");
  if (pid == 0) {
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (chdir(plan.cwd.c_str()) != 0) _exit(126);
    execve(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  child = pid;
  close(out[1]);
  close(err[1]);
  Utf8Stream streams[2];
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  const char* category[2] = {"stdout", "stderr"};
  std::string last_error;  // rewind's own message, when recording fails
  int open_fds = 2;
  RecordingStopper stopper;
  while (open_fds > 0) {
    stopper.poll(pid, abandoned);
    if (poll(fds, 2, 250) < 0) {
      if (errno == EINTR) continue;
      throw_errno("poll");
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        std::string rest = streams[i].rest();
        if (!rest.empty()) output(category[i], rest);
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      std::string text = streams[i].take(buf, size_t(n));
      if (i == 1) last_error = text;
      if (!text.empty()) output(category[i], text);
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw_errno("waitpid");
  child = 0;
  rec.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (is_empty_dir(rec.trace_dir)) {  // rewind record stopped before the program started
    ::rmdir(rec.trace_dir.c_str());
    while (!last_error.empty() && last_error.back() == '\n') last_error.pop_back();
    throw Error("recording " + plan.program + " failed" +
                (last_error.empty() ? "" : ": " + last_error.substr(last_error.rfind('\n') + 1)));
  }
  set_latest_trace(plan.traces_root, rec.trace_dir);
  return rec;
}

}  // namespace rwd
