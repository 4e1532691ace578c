// A minimal Debug Adapter Protocol client for tests: starts `rewind dap` with pipes on its
// stdin/stdout, sends requests, and collects responses and events.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>

#include "adapter/dap/dap_wire.h"

namespace test {

class DapClient {
 public:
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
    reader_ = std::make_unique<rwd::DapReader>(from_child[0]);
    in_ = from_child[0];
  }
  ~DapClient() {
    close(out_);
    close(in_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  /// Sends raw bytes as one message body (for malformed-input tests).
  void send_raw(const std::string& body) { rwd::write_dap_message(out_, body); }

  /// Sends a request and returns its response (events that arrive first are kept).
  nlohmann::json request(const std::string& command,
                         nlohmann::json args = nlohmann::json::object()) {
    int seq = seq_++;
    nlohmann::json req = {
        {"seq", seq}, {"type", "request"}, {"command", command}, {"arguments", args}};
    rwd::write_dap_message(out_, req.dump());
    for (;;) {
      nlohmann::json m = next();
      if (m["type"] == "response" && m["request_seq"] == seq) return m;
      events_.push_back(m);
    }
  }

  /// The next event named `name` (earlier other events are dropped).
  nlohmann::json event(const std::string& name) {
    for (;;) {
      nlohmann::json m;
      if (!events_.empty()) {
        m = events_.front();
        events_.pop_front();
      } else {
        m = next();
      }
      if (m["type"] == "event" && m["event"] == name) return m;
    }
  }

  /// Waits for the adapter to exit; returns its exit status.
  int wait_exit() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  nlohmann::json next() {
    auto body = reader_->next();
    REQUIRE(body.has_value());
    return nlohmann::json::parse(*body);
  }

  pid_t pid_ = -1;
  int out_ = -1, in_ = -1, seq_ = 1;
  std::unique_ptr<rwd::DapReader> reader_;
  std::deque<nlohmann::json> events_;
};

}  // namespace test
