// One Debug Adapter Protocol session over a replayed trace (DESIGN.md "The DAP adapter"): its
// life cycle only. Messages come in, are checked against the base protocol, wait their turn
// (a cancelled one is answered "cancelled"), pass the token gate of a TCP server, and go to
// their handler (handlers/dap_handlers.h); the handlers share a DapContext and answer through
// a DapChannel.
#pragma once

#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "adapter/dap/dap_channel.h"
#include "adapter/dap/dap_context.h"

namespace rwd {

/// Serves the requests of one client. handle() is called from one thread, one message at a
/// time; on_arrival() and on_client_gone() from the thread that reads the connection.
class DapSession {
 public:
  /// `send` writes one message (a response or an event) to the client; it is called from
  /// the handling thread and from the timeline's engine thread (program output), never
  /// concurrently.
  DapSession(std::function<void(const nlohmann::json&)> send, DapSessionOptions opts = {});
  ~DapSession();
  /// Handles one message body. Malformed JSON and bad requests get an error response (or,
  /// without a request to answer, an output event); the session goes on. Returns false once
  /// the session is over (disconnect, terminate, or a refused token).
  bool handle(const std::string& body);
  /// Sees each message as soon as it is read, before it waits its turn: `pause` interrupts
  /// a running continue, `cancel` marks a waiting request, `disconnect`/`terminate` stop a
  /// recording in progress, and responses to rewind's own requests are handed over.
  /// Thread-safe.
  void on_arrival(const std::string& body);
  /// Tells the session its client went away without disconnecting: anything running stops.
  void on_client_gone();
  /// True once the client gave the right token, or when the session needs none.
  /// Thread-safe (read by the connection's reading thread for opts.auth_timeout_ms).
  bool authenticated() const { return ctx_.opts.token.empty() || ctx_.authenticated; }
  /// Sends `text` as an output event of category "important" (VS Code shows it in a
  /// notification). Call from the handling thread.
  void tell(const std::string& text) { out_.output("important", text); }

 private:
  /// Serves one well-formed request through its handler; every failure becomes an error
  /// response, and the session goes on.
  void dispatch(const nlohmann::json& req);

  DapChannel out_;
  DapContext ctx_;
  std::mutex cancel_mu_;
  std::set<int64_t> cancelled_;  ///< seqs of requests cancelled before their turn
};

}  // namespace rwd
