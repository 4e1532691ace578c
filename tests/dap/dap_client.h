// A minimal Debug Adapter Protocol client for tests: starts `rewind dap` with pipes on its
// stdin/stdout (or connects to a `rewind dap --listen` server), sends requests, collects
// responses and events, and checks everything the adapter sent against the DAP schema.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "adapter/dap/dap_wire.h"

namespace test {

/// A `rewind dap --listen` server started for a test; killed when destroyed.
class DapServer {
 public:
  /// Starts `rewind dap --listen LISTEN [extra...]` and waits for it to say its port.
  /// `env` is added to the server's environment (REWIND_TRACE_DIR, for one). When neither
  /// --token nor --token-file is in `extra`, the token the server made is read from the
  /// file it names (token()).
  DapServer(const std::string& rewind, const std::string& listen,
            const std::vector<std::string>& extra = {},
            const std::vector<std::pair<std::string, std::string>>& env = {}) {
    int err[2];
    REQUIRE(pipe(err) == 0);
    pid_ = fork();
    if (pid_ == 0) {
      for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
      dup2(err[1], 2);
      close(err[0]);
      std::vector<std::string> args = {rewind, "dap", "--listen", listen};
      args.insert(args.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(err[1]);
    err_ = err[0];
    while (port_ == 0) {
      std::string line = read_line();
      if (first_line_.empty()) first_line_ = line;
      if (line.empty()) break;
      size_t at = line.rfind(':');
      if (line.find("listening on") != std::string::npos && at != std::string::npos)
        port_ = std::atoi(line.c_str() + at + 1);
    }
    bool given = std::find(extra.begin(), extra.end(), "--token") != extra.end() ||
                 std::find(extra.begin(), extra.end(), "--token-file") != extra.end();
    if (port_ > 0 && !given) {
      std::string line = read_line();
      size_t from = line.find("held in "), to = line.find(" (");
      REQUIRE(from != std::string::npos);
      token_file_ = line.substr(from + 8, to - from - 8);
      std::ifstream(token_file_) >> token_;
    }
  }
  ~DapServer() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(err_);
  }
  int port() const { return port_; }
  /// The token clients must give; "" when it was given on the server's command line.
  const std::string& token() const { return token_; }
  /// The file the server wrote its token to ("" when it was given).
  const std::string& token_file() const { return token_file_; }
  /// The server's first line on stderr (the error when it refused to start).
  const std::string& first_line() const { return first_line_; }
  /// Waits for the server to exit; returns its wait status.
  int wait_exit() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }
  /// The next line the server writes on stderr ("" at its end).
  std::string read_line() {
    std::string line;
    char c;
    while (read(err_, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }

 private:
  pid_t pid_ = -1;
  int err_ = -1, port_ = 0;
  std::string first_line_, token_, token_file_;
};

class DapClient {
 public:
  /// Starts `rewind dap` on pipes.
  explicit DapClient(const std::string& rewind) {
    int to_child[2], from_child[2];
    REQUIRE(pipe(to_child) == 0);
    REQUIRE(pipe(from_child) == 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[1]);
      close(from_child[0]);
      execl(rewind.c_str(), rewind.c_str(), "dap", nullptr);
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    out_ = to_child[1];
    in_ = from_child[0];
    reader_ = std::make_unique<rwd::DapReader>(in_);
  }
  /// Connects to a server on 127.0.0.1:`port`.
  explicit DapClient(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    in_ = out_ = fd;
    reader_ = std::make_unique<rwd::DapReader>(in_);
  }
  ~DapClient() {
    close(out_);
    if (in_ != out_) close(in_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  /// Sends raw bytes as one message body (for malformed-input tests).
  void send_raw(const std::string& body) { rwd::write_dap_message(out_, body); }

  /// Sends a request without waiting; returns its seq.
  int send(const std::string& command, nlohmann::json args = nlohmann::json::object()) {
    int seq = seq_++;
    nlohmann::json req = {
        {"seq", seq}, {"type", "request"}, {"command", command}, {"arguments", args}};
    rwd::write_dap_message(out_, req.dump());
    return seq;
  }

  /// The response to request `seq` (events that arrive first are kept).
  nlohmann::json response(int64_t seq) {
    return take([&](const nlohmann::json& m) {
      return m["type"] == "response" && m["request_seq"] == seq;
    });
  }

  /// Sends a request and returns its response.
  nlohmann::json request(const std::string& command,
                         nlohmann::json args = nlohmann::json::object()) {
    return response(send(command, std::move(args)));
  }

  /// Starts a replay of `trace` stopped at its first event (initialize, launch with
  /// stopOnEntry, configurationDone) and returns the "stopped" event.
  nlohmann::json launch_at_entry(const std::string& trace) {
    REQUIRE(request("initialize", {{"adapterID", "rewind"}})["success"] == true);
    REQUIRE(request("launch",
                    {{"mode", "replay"}, {"trace", trace}, {"stopOnEntry", true}})["success"] ==
            true);
    event("initialized");
    REQUIRE(request("configurationDone")["success"] == true);
    return event("stopped");
  }

  /// The next event named `name` (earlier other events are dropped). Waiting for "stopped", a
  /// "terminated" fails the test at once, with the adapter's last "important" output.
  nlohmann::json event(const std::string& name) {
    std::string said;  // the adapter's last "important" output: why a session ended
    for (;;) {
      nlohmann::json m;
      if (!events_.empty()) {
        m = events_.front();
        events_.pop_front();
      } else {
        m = next();
      }
      if (m["type"] != "event") continue;
      if (m["event"] == name) return m;
      if (m["event"] == "output" && m["body"].value("category", "") == "important")
        said = m["body"].value("output", "");
      // A stop that will never come: fail now, with the reason, rather than at ctest's limit.
      if (name == "stopped" && m["event"] == "terminated")
        FAIL("the session ended (terminated) instead of stopping: " << said);
    }
  }

  /// The next reverse request `command` from the adapter (runInTerminal); other messages that
  /// come first are kept for response() and event().
  nlohmann::json reverse_request(const std::string& command) {
    return take(
        [&](const nlohmann::json& m) { return m["type"] == "request" && m["command"] == command; });
  }

  /// Answers the adapter's reverse request `req`: success with `body`, or failure with
  /// `message`.
  void reply(const nlohmann::json& req, bool success, nlohmann::json body,
             const std::string& message = "") {
    nlohmann::json r = {{"seq", seq_++},
                        {"type", "response"},
                        {"request_seq", req["seq"]},
                        {"command", req["command"]},
                        {"success", success}};
    if (!body.is_null()) r["body"] = std::move(body);
    if (!success) r["message"] = message;
    rwd::write_dap_message(out_, r.dump());
  }

  /// Fails the next read that waits more than `limit` (a hung adapter becomes a test
  /// failure with a message, not a CTest timeout). Call before each wait.
  void deadline(std::chrono::seconds limit) {
    reader_->set_deadline(
        std::chrono::steady_clock::now() + limit, [] { return true; },
        "the adapter sent nothing for " + std::to_string(limit.count()) + " s");
  }

  /// Forgets the messages kept for response() and event() (they stay in seen() and the
  /// schema check): for long runs that do not read every answer.
  void drop_kept() { events_.clear(); }

  /// Every message received so far, in order.
  const std::vector<nlohmann::json>& received() const { return all_; }

  /// Every event named `name` received so far (kept or dropped), in order.
  std::vector<nlohmann::json> seen(const std::string& name) const {
    std::vector<nlohmann::json> out;
    for (const auto& m : all_)
      if (m["type"] == "event" && m["event"] == name) out.push_back(m);
    return out;
  }

  /// True when the adapter closed the connection (reads until then).
  bool closed() {
    try {
      for (;;) {
        auto body = reader_->next();
        if (!body) return true;
        all_.push_back(nlohmann::json::parse(*body));
      }
    } catch (const std::exception&) {
      return true;
    }
  }

  /// Waits for the adapter to exit; returns its exit status.
  int wait_exit() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

  /// Checks every message the adapter sent against the official DAP schema.
  void check_schema() const {
    char path[] = "/tmp/rewind-dap-messages.XXXXXX";
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    std::ofstream(path) << nlohmann::json(all_).dump();
    std::string cmd =
        std::string("python3 ") + DAP_VALIDATOR + " " + DAP_SCHEMA + " " + path + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string report;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) report.append(buf, n);
    int status = pclose(p);
    unlink(path);
    INFO(report);
    CHECK(status == 0);
  }

 private:
  /// The first message, kept or new, that `wanted` accepts; the others read meanwhile are
  /// kept, in order.
  template <typename Pred>
  nlohmann::json take(Pred wanted) {
    for (auto it = events_.begin(); it != events_.end(); ++it)
      if (wanted(*it)) {
        nlohmann::json m = *it;
        events_.erase(it);
        return m;
      }
    for (;;) {
      nlohmann::json m = next();
      if (wanted(m)) return m;
      events_.push_back(m);
    }
  }

  nlohmann::json next() {
    auto body = reader_->next();
    REQUIRE(body.has_value());
    nlohmann::json m = nlohmann::json::parse(*body);
    all_.push_back(m);
    return m;
  }

  pid_t pid_ = -1;
  int out_ = -1, in_ = -1, seq_ = 1;
  std::unique_ptr<rwd::DapReader> reader_;
  std::deque<nlohmann::json> events_;
  std::vector<nlohmann::json> all_;
};

/// The innermost frame of thread `tid` (stackTrace), failing the test when there is none.
inline nlohmann::json top_frame(DapClient& c, int tid) {
  nlohmann::json st = c.request("stackTrace", {{"threadId", tid}});
  REQUIRE(st["success"] == true);
  REQUIRE(!st["body"]["stackFrames"].empty());
  return st["body"]["stackFrames"][0];
}

/// Where thread `tid` stopped in a script: the top frame's function, file and line, and the
/// locals of its first scope as the Variables view shows them.
struct ScriptStop {
  std::string function, file;
  int line = 0;
  std::map<std::string, std::string> locals;
};

inline ScriptStop script_stop(DapClient& c, int tid) {
  nlohmann::json frame = top_frame(c, tid);
  ScriptStop s;
  s.function = frame["name"];
  s.line = frame["line"];
  if (frame.contains("source")) s.file = frame["source"].value("path", "");
  nlohmann::json scopes = c.request("scopes", {{"frameId", frame["id"]}});
  REQUIRE(scopes["success"] == true);
  REQUIRE(!scopes["body"]["scopes"].empty());
  nlohmann::json vars = c.request(
      "variables", {{"variablesReference", scopes["body"]["scopes"][0]["variablesReference"]}});
  for (const nlohmann::json& v : vars["body"]["variables"]) s.locals[v["name"]] = v["value"];
  return s;
}

/// rewind/interpreterCode for frame `frame_id` (a script frame): the response body, with
/// "current" added: the instruction at currentOffset (null when there is none).
inline nlohmann::json interpreter_code(DapClient& c, int frame_id) {
  nlohmann::json r = c.request("rewind/interpreterCode", {{"frameId", frame_id}});
  REQUIRE(r["success"] == true);
  nlohmann::json code = r["body"];
  code["current"] = nullptr;
  for (const nlohmann::json& i : code["instructions"])
    if (code.contains("currentOffset") && i["offset"] == code["currentOffset"]) code["current"] = i;
  return code;
}

/// `expr` evaluated in frame `frame_id` as a watch expression: its value, or "error: " and
/// the adapter's message.
inline std::string evaluate(DapClient& c, int frame_id, const std::string& expr) {
  nlohmann::json r =
      c.request("evaluate", {{"expression", expr}, {"frameId", frame_id}, {"context", "watch"}});
  return r["success"] == true ? r["body"]["result"].get<std::string>()
                              : "error: " + r["message"].get<std::string>();
}

}  // namespace test
