#include "adapter/dap/dap_channel.h"

#include <chrono>

#include "adapter/dap/dap_args.h"
#include "engine/errors.h"

namespace rwd {

using nlohmann::json;

json error_response(int64_t request_seq, const std::string& command, const std::string& message,
                    bool show_user) {
  return {{"type", "response"},
          {"request_seq", request_seq},
          {"success", false},
          {"command", command},
          {"message", message},
          {"body", {{"error", {{"id", 1}, {"format", message}, {"showUser", show_user}}}}}};
}

void DapChannel::post(json msg) {
  std::lock_guard lock(send_mu_);
  msg["seq"] = seq_++;
  send_(msg);
}

void DapChannel::respond(const json& req, json body) {
  json r = {{"type", "response"},
            {"request_seq", message_seq(req).value_or(0)},
            {"success", true},
            {"command", string_member(req, "command")}};
  if (!body.empty()) r["body"] = std::move(body);
  post(std::move(r));
}

void DapChannel::fail(const json& req, const std::string& message, bool show_user) {
  post(error_response(message_seq(req).value_or(0), string_member(req, "command"), message,
                      show_user));
}

void DapChannel::event(const std::string& name, json body) {
  json e = {{"type", "event"}, {"event", name}};
  if (!body.empty()) e["body"] = std::move(body);
  post(std::move(e));
}

json DapChannel::request(const std::string& command, json args) {
  int64_t seq;
  {
    std::lock_guard lock(send_mu_);
    seq = seq_++;
    send_({{"seq", seq}, {"type", "request"}, {"command", command}, {"arguments", args}});
  }
  std::unique_lock lock(reply_mu_);
  bool answered = reply_cv_.wait_for(lock, std::chrono::minutes(1),
                                     [&] { return replies_.count(seq) || abandoned_.load(); });
  if (!replies_.count(seq))
    throw Error(answered ? "the client went away before answering " + command
                         : "the client did not answer " + command + " within a minute");
  json reply = std::move(replies_[seq]);
  replies_.erase(seq);
  return reply;
}

void DapChannel::take_reply(int64_t request_seq, json msg) {
  {
    std::lock_guard lock(reply_mu_);
    replies_[request_seq] = std::move(msg);
  }
  reply_cv_.notify_all();
}

void DapChannel::abandon() {
  {
    std::lock_guard lock(reply_mu_);
    abandoned_ = true;
  }
  reply_cv_.notify_all();
}

}  // namespace rwd
