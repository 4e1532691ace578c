// One Debug Adapter Protocol session over a replayed trace (DESIGN.md "The DAP adapter"):
// requests in, responses and events out, the engine's Debugger underneath.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/debugger/debugger.h"

namespace rwd {

/// Handles the requests of one client. Not thread-safe: one message at a time.
class DapSession {
 public:
  /// `send` writes one message (a response or an event) to the client.
  explicit DapSession(std::function<void(const nlohmann::json&)> send);
  ~DapSession();
  /// Handles one message body. Malformed JSON and bad requests get an error response (or,
  /// without a request to answer, an output event); the session goes on. Returns false once
  /// the client disconnected.
  bool handle(const std::string& body);

 private:
  using Handler = void (DapSession::*)(const nlohmann::json& req);
  /// What a variablesReference names: a scope of a frame, or a value's children.
  struct VarRef {
    enum Kind { Locals, Arguments, Globals, Children } kind;
    pid_t tid = 0;
    size_t frame = 0;
    Value value;
  };

  void respond(const nlohmann::json& req, nlohmann::json body = nlohmann::json::object());
  void fail(const nlohmann::json& req, const std::string& message);
  void event(const std::string& name, nlohmann::json body = nlohmann::json::object());
  Debugger& debugger(const nlohmann::json& req);  // throws when not launched
  void stopped(const DebugStop& d, const std::string& step_reason = "step");
  pid_t thread_arg(const nlohmann::json& req);
  int ref_for(VarRef r);
  nlohmann::json variable_json(const std::string& name, const Value& v, pid_t tid);
  std::string format(const Value& v, pid_t tid);

  void initialize(const nlohmann::json& req);
  void launch(const nlohmann::json& req);
  void configuration_done(const nlohmann::json& req);
  void disconnect(const nlohmann::json& req);
  void set_breakpoints(const nlohmann::json& req);
  void set_function_breakpoints(const nlohmann::json& req);
  void set_exception_breakpoints(const nlohmann::json& req);
  void threads(const nlohmann::json& req);
  void stack_trace(const nlohmann::json& req);
  void scopes(const nlohmann::json& req);
  void variables(const nlohmann::json& req);
  void evaluate(const nlohmann::json& req);
  void resume(const nlohmann::json& req);
  void step(const nlohmann::json& req);

  std::function<void(const nlohmann::json&)> send_;
  int seq_ = 1;
  std::unique_ptr<Timeline> timeline_;
  std::unique_ptr<Debugger> debugger_;
  bool stop_on_entry_ = false, configured_ = false, ended_ = false;
  std::vector<std::pair<pid_t, size_t>> frames_;  ///< frameId - 1 -> (thread, frame index)
  std::vector<VarRef> refs_;                      ///< variablesReference - 1 -> what it names
};

}  // namespace rwd
