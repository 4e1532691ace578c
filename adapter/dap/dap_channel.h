// The session's end of the wire: numbered messages out (responses, events, rewind's own
// requests to the client) and the client's answers to those requests in.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace rwd {

/// A DAP error response to request `request_seq` (DAP ErrorResponse: the message, and a
/// Message with `showUser`); the caller adds "seq". Shared by sessions and by the TCP
/// server's "busy" answer.
nlohmann::json error_response(int64_t request_seq, const std::string& command,
                              const std::string& message, bool show_user = true);

/// Writes one session's messages, each with the next seq (DAP ProtocolMessage.seq, from 1),
/// and waits for the client's responses to reverse requests (runInTerminal). Thread-safe:
/// messages go out from the handling thread and from the replay's (program output).
class DapChannel {
 public:
  /// `send` writes one message to the client; never called concurrently.
  using Send = std::function<void(const nlohmann::json&)>;
  explicit DapChannel(Send send) : send_(std::move(send)) {}

  /// Sends a success response to request `req` with `body` (left out when empty).
  void respond(const nlohmann::json& req, nlohmann::json body = nlohmann::json::object());
  /// Sends an error response to `req`; `show_user` false for errors a client should not
  /// show (a stale reference after the program moved).
  void fail(const nlohmann::json& req, const std::string& message, bool show_user = true);
  /// Sends event `name` with `body` (left out when empty).
  void event(const std::string& name, nlohmann::json body = nlohmann::json::object());
  /// Sends an output event (DAP OutputEvent): `category` "console", "important", "stdout"...
  void output(const std::string& category, const std::string& text) {
    event("output", {{"category", category}, {"output", text}});
  }
  /// Opens an output group headed `title` (OutputEvent's "group": "start"): the output events
  /// up to output_group_end() are shown under it.
  void output_group_start(const std::string& title) {
    event("output", {{"category", "console"}, {"output", title + "\n"}, {"group", "start"}});
  }
  /// Closes the output group output_group_start() opened.
  void output_group_end() {
    event("output", {{"category", "console"}, {"output", ""}, {"group", "end"}});
  }
  /// Sends a reverse request (DAP runInTerminal) and waits for the client's response.
  /// Throws Error when the client goes away or does not answer within a minute.
  nlohmann::json request(const std::string& command, nlohmann::json args);
  /// Hands over a response message the client sent to one of request()'s requests (called
  /// by the thread that reads the connection).
  void take_reply(int64_t request_seq, nlohmann::json msg);
  /// The client went away: request() stops waiting, and abandoned() is true from now on.
  void abandon();
  /// Set once the client disconnected or went away (read by long waits: a recording).
  const std::atomic<bool>& abandoned() const { return abandoned_; }

 private:
  void post(nlohmann::json msg);

  Send send_;
  std::mutex send_mu_;
  int64_t seq_ = 1;
  std::atomic<bool> abandoned_{false};
  std::mutex reply_mu_;
  std::condition_variable reply_cv_;
  std::map<int64_t, nlohmann::json> replies_;  ///< responses to reverse requests, by seq
};

}  // namespace rwd
