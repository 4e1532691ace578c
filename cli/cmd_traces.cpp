// rewind ls, ps and rm: looking at and removing traces.
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "engine/errors.h"
#include "engine/trace/process_list.h"
#include "engine/trace/trace_dir.h"
#include "engine/trace/trace_files.h"
#include "engine/trace/trace_reader.h"

namespace rwd::cli {

namespace {
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}

std::string exit_text(const ProcessInfo& p) {
  if (!p.ended) return "-";
  return std::to_string(exit_code_for_status(p.status));
}

/// One trace for `rewind ls --json`: name, dir, recorded (seconds since the epoch), events
/// (null while partial), exitCode (null while partial), command (argv), latest; or name, dir
/// and error when the trace cannot be read.
nlohmann::json trace_json(const std::string& root, const std::string& name,
                          const std::string& latest) {
  std::string dir = root + "/" + name;
  nlohmann::json j = {{"name", name}, {"dir", dir}};
  try {
    TraceMeta m = read_trace_meta(dir);
    auto s = read_trace_summary(dir);
    j["recorded"] = m.start_time;
    j["events"] = s ? nlohmann::json(s->events) : nlohmann::json();
    j["exitCode"] = s ? nlohmann::json(exit_code_for_status(s->root_status)) : nlohmann::json();
    j["command"] = m.argv;
    j["latest"] = dir == latest;
  } catch (const Error& e) {
    j["error"] = e.what();
  }
  return j;
}

}  // namespace

Runner add_ls(CLI::App& app) {
  auto* cmd = app.add_subcommand("ls", "List recorded traces");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json,
                "Print a JSON array, the latest trace first, then newest first: name, dir, "
                "recorded, events, exitCode, command, "
                "latest (for editors)");
  return [json] {
    std::string root = traces_root();
    std::string latest;
    try {
      latest = resolve_trace("");
    } catch (const Error&) {
    }
    if (*json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& name : list_traces(root)) out.push_back(trace_json(root, name, latest));
      std::stable_sort(out.begin(), out.end(),
                       [](const nlohmann::json& a, const nlohmann::json& b) {
                         if (a.value("latest", false) != b.value("latest", false))
                           return a.value("latest", false);
                         return a.value("recorded", int64_t(0)) > b.value("recorded", int64_t(0));
                       });
      std::printf("%s\n", out.dump(2).c_str());
      return 0;
    }
    std::printf("%-24s %-19s %9s %5s  %s\n", "NAME", "RECORDED", "EVENTS", "EXIT", "COMMAND");
    for (const auto& name : list_traces(root)) {
      std::string dir = root + "/" + name;
      try {
        TraceMeta m = read_trace_meta(dir);
        auto s = read_trace_summary(dir);
        char when[32];
        time_t t = time_t(m.start_time);
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&t));
        std::string events = s ? std::to_string(s->events) : "partial";
        std::string exit = s ? std::to_string(exit_code_for_status(s->root_status)) : "-";
        std::printf("%-24s %-19s %9s %5s  %s%s\n", name.c_str(), when, events.c_str(), exit.c_str(),
                    join(m.argv).c_str(), dir == latest ? "  (latest)" : "");
      } catch (const Error& e) {
        std::printf("%-24s unreadable: %s\n", name.c_str(), e.what());
      }
    }
    return 0;
  };
}

Runner add_ps(CLI::App& app) {
  auto* cmd = app.add_subcommand("ps", "List the processes of a trace");
  auto trace = std::make_shared<std::string>();
  cmd->add_option("TRACE", *trace, "Trace name or directory (default: latest)");
  return [trace] {
    std::string dir = resolve_trace(*trace);
    std::printf("PID\tPPID\tEXIT\tCMD\n");
    for (const auto& p : trace_processes(dir))
      std::printf("%d\t%d\t%s\t%s\n", p.pid, p.ppid, exit_text(p).c_str(), join(p.argv).c_str());
    return 0;
  };
}

Runner add_rm(CLI::App& app) {
  auto* cmd = app.add_subcommand("rm", "Delete a trace");
  auto trace = std::make_shared<std::string>();
  cmd->add_option("TRACE", *trace, "Trace name or directory")->required();
  return [trace] {
    std::string dir = resolve_trace(*trace);
    if (::access((dir + "/" + kVersionFile).c_str(), F_OK) != 0)
      throw Error(dir + " is not a rewind trace; not removing it");
    std::string root = traces_root();
    char real_dir[PATH_MAX], real_latest[PATH_MAX];
    bool was_latest = realpath(dir.c_str(), real_dir) &&
                      realpath((root + "/latest-trace").c_str(), real_latest) &&
                      std::string(real_dir) == real_latest;
    auto rm = [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); };
    if (nftw(dir.c_str(), rm, 16, FTW_DEPTH | FTW_PHYS) != 0) throw_errno("remove " + dir);
    if (was_latest) ::unlink((root + "/latest-trace").c_str());
    return 0;
  };
}

}  // namespace rwd::cli
