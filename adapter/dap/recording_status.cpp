#include "adapter/dap/recording_status.h"

#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "engine/errors.h"

namespace rwd {

using nlohmann::json;

void write_recording_status(const std::string& path, const RecordingStatus& status) {
  json j;
  switch (status.state) {
    case RecordingStatus::Recording:
      j = {{"state", "recording"}, {"pid", status.pid}};
      break;
    case RecordingStatus::Finished:
      j = {{"state", "finished"}, {"exit_code", status.exit_code}, {"trace", status.trace}};
      if (!status.error.empty()) j["error"] = status.error;
      break;
    case RecordingStatus::Failed:
      j = {{"state", "failed"}, {"error", status.error}};
      break;
  }
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump() << "\n";
    if (!out.flush()) throw Error("cannot write the status file " + tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw_errno("rename " + tmp);
}

std::optional<RecordingStatus> read_recording_status(const std::string& path) {
  if (::access(path.c_str(), F_OK) != 0) {
    if (errno == ENOENT) return std::nullopt;
    throw_errno("access " + path);
  }
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, false);
  auto bad = [&] { return Error(path + " is not a rewind recording status"); };
  if (!j.is_object() || !j.contains("state") || !j["state"].is_string()) throw bad();
  RecordingStatus s;
  try {
    std::string state = j["state"];
    if (state == "recording") {
      s.state = RecordingStatus::Recording;
      s.pid = j.at("pid").get<pid_t>();
    } else if (state == "finished") {
      s.state = RecordingStatus::Finished;
      s.exit_code = j.at("exit_code").get<int>();
      s.trace = j.at("trace").get<std::string>();
      s.error = j.value("error", "");
    } else if (state == "failed") {
      s.state = RecordingStatus::Failed;
      s.error = j.at("error").get<std::string>();
    } else {
      throw bad();
    }
  } catch (const json::exception&) {
    throw bad();
  }
  return s;
}

}  // namespace rwd
