#include "adapter/dap/dap_session.h"

#include <signal.h>

#include <map>

#include "adapter/dap/dap_args.h"
#include "adapter/dap/handlers/dap_handlers.h"

namespace rwd {

using nlohmann::json;

DapSession::DapSession(std::function<void(const json&)> send, DapSessionOptions opts)
    : out_(std::move(send)), ctx_(out_, std::move(opts)) {}

DapSession::~DapSession() = default;

void DapSession::on_arrival(const std::string& body) {
  json msg = json::parse(body, nullptr, false);
  std::string type = string_member(msg, "type");
  if (type == "response" && msg.contains("request_seq") && msg["request_seq"].is_number_integer()) {
    out_.take_reply(msg["request_seq"].get<int64_t>(), msg);
    return;
  }
  if (type != "request") return;
  std::string command = string_member(msg, "command");
  const json& args = arguments(msg);
  if (command == "pause") {
    if (Timeline* t = ctx_.running_timeline.load()) {
      t->interrupt();
      std::lock_guard lock(ctx_.pause_mu);
      if (auto seq = message_seq(msg)) ctx_.interrupting_pauses.insert(*seq);
    }
  } else if (command == "cancel" && args.contains("requestId") &&
             args["requestId"].is_number_integer()) {
    int64_t id = args["requestId"].get<int64_t>();
    HistoryQuery* q = ctx_.running_query.load();
    HitQuery* hq = ctx_.running_hit_query.load();
    if ((q || hq) && id == ctx_.running_query_seq.load()) {
      if (q) q->interrupt();  // it answers with what it found so far
      if (hq) hq->interrupt();
    } else {
      std::lock_guard lock(cancel_mu_);
      cancelled_.insert(id);
    }
  } else if (command == "disconnect" || command == "terminate") {
    on_client_gone();
  }
}

void DapSession::on_client_gone() {
  out_.abandon();
  if (pid_t child = ctx_.recording.load()) ::kill(child, SIGTERM);  // the trace is kept
  if (Timeline* t = ctx_.running_timeline.load()) t->interrupt();
  if (HistoryQuery* q = ctx_.running_query.load()) q->interrupt();
  if (HitQuery* q = ctx_.running_hit_query.load()) q->interrupt();
}

bool DapSession::handle(const std::string& body) {
  json req;
  try {
    req = json::parse(body);
  } catch (const json::exception& e) {
    out_.output("important",
                std::string("rewind: malformed DAP message ignored: ") + e.what() + "\n");
    return true;
  }
  // Responses to reverse requests were handed over as they arrived (on_arrival).
  std::string type = string_member(req, "type");
  if (type == "response") return true;
  std::optional<int64_t> seq = message_seq(req);
  if (type != "request" || !seq || *seq < 0 || string_member(req, "command").empty()) {
    // A response must name its request by its seq: without one, the message is refused in an
    // output event. The DAP schema numbers messages from 1, but nvim-dap 0.6.0 (the release
    // for Debian 12's Neovim) numbers its requests from 0, so 0 is served too.
    if (type == "request" && seq && *seq >= 0)
      out_.fail(req, "a request needs an integer \"seq\" and a string \"command\"");
    else
      out_.output("important", type == "request"
                                   ? "rewind: a request without an integer \"seq\" (0 or more) "
                                     "was ignored\n"
                                   : "rewind: a message that is not a request was ignored\n");
    return true;
  }
  {
    std::lock_guard lock(cancel_mu_);
    if (cancelled_.erase(*seq)) {
      out_.fail(req, "cancelled");
      return true;
    }
  }
  dispatch(req);
  return !ctx_.ended;
}

void DapSession::dispatch(const json& req) {
  static const std::map<std::string, const RequestHandler*> handlers = [] {
    std::map<std::string, const RequestHandler*> m;
    for (const auto& h : request_handlers())
      if (h.serve) m[h.command] = &h;
    return m;
  }();
  std::string command = req["command"];
  // With a token to check, nothing but initialize, and launch or attach carrying the token,
  // is served before the token was given: a client that skips it is refused and its
  // connection closes (docs/dap.md, "Remote debugging").
  if (!authenticated() && command != "initialize" && command != "launch" && command != "attach") {
    ctx_.ended = true;
    out_.fail(req,
              "this rewind server needs a \"token\" in launch or attach before any other "
              "request: connection refused");
    return;
  }
  auto it = handlers.find(command);
  if (it == handlers.end()) {
    out_.fail(req, "rewind does not support the \"" + command + "\" request");
    return;
  }
  DapRequest request(req, out_);
  try {
    it->second->serve(ctx_, request);
  } catch (const AnsweredError& e) {
    if (!request.answered()) out_.fail(req, e.what());  // failed before its response (seek)
  } catch (const StaleReferenceError& e) {
    out_.fail(req, e.what(), false);
  } catch (const Error& e) {
    out_.fail(req, e.what());
  } catch (const json::exception& e) {
    out_.fail(req, std::string("bad arguments: ") + e.what());
  } catch (const std::exception& e) {
    // Whatever a request provokes, the server answers and goes on serving.
    out_.fail(req, std::string("rewind could not serve this request: ") + e.what());
  }
}

}  // namespace rwd
