// Moving through the recording: continue and steps both ways, pause, restart, seek.
#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_session.h"

namespace rwd {

using nlohmann::json;

DebugStop DapSession::running(const std::function<DebugStop()>& op) {
  running_ = timeline_.get();
  try {
    DebugStop s = op();
    running_ = nullptr;
    return s;
  } catch (const Error& e) {
    running_ = nullptr;
    // The client waits for a stop (the request was answered before it ran): say what went
    // wrong, then stop where the replay is; a replay that failed (a divergence) cannot go
    // on, and the session ends (DAP terminated) instead of leaving the client waiting.
    event("output",
          {{"category", "important"}, {"output", std::string("rewind: ") + e.what() + "\n"}});
    try {
      DebugStop s;
      s.stop = timeline_->current();
      (void)timeline_->registers(s.stop.tid);  // throws once the replay has failed
      return s;
    } catch (const Error&) {
      event("terminated");
      throw AnsweredError(e.what());
    }
  } catch (...) {
    running_ = nullptr;
    throw;
  }
}

void DapSession::resume(const json& req) {
  Debugger& d = debugger();
  bool back = req["command"] == "reverseContinue";
  respond(req, {{"allThreadsContinued", true}});
  // Reaching either end of the recording is a pause (with a description saying which).
  stopped(running([&] { return d.resume(back ? Direction::Backward : Direction::Forward); }),
          "pause");
}

void DapSession::step(const json& req) {
  Debugger& d = debugger();
  std::string cmd = req["command"];
  pid_t tid = thread_arg(req);
  std::string granularity = optional_arg<std::string>(arguments(req), "granularity", "statement");
  if (granularity != "statement" && granularity != "line" && granularity != "instruction")
    throw RequestError("unknown granularity \"" + granularity + "\"");
  respond(req);
  Direction dir = cmd == "stepBack" ? Direction::Backward : Direction::Forward;
  if (granularity == "instruction" && cmd != "stepOut") {
    // One instruction; "stepIn" and "next" differ only at a call, which gdb's stepi and
    // nexti treat alike at this level (DAP leaves it to the adapter).
    stopped(running([&] { return d.step_instruction(tid, dir); }));
    return;
  }
  StepKind kind = cmd == "stepIn"    ? StepKind::Into
                  : cmd == "stepOut" ? StepKind::Out
                                     : StepKind::Over;
  if (python_on_top(tid)) {
    // The task runs Python code and its innermost frame shown is a Python frame: step by
    // the script's lines (engine/debugger/python_stepper.h).
    try {
      const PythonReader& python = *scripts_->interpreter(tid)->python();
      stopped(running([&] { return d.step_python(tid, python, kind, dir); }));
      return;
    } catch (const Error& e) {
      event("output", {{"category", "console"},
                       {"output", std::string("rewind: ") + e.what() + "; stepping by C lines\n"}});
    }
  }
  stopped(running([&] { return d.step(tid, kind, dir); }));
}

void DapSession::pause(const json& req) {
  // A running continue was interrupted when this request arrived (on_arrival), and its stop
  // was reported; a program already stopped stays where it is and says so again.
  debugger();
  respond(req);
  {
    std::lock_guard lock(cancel_mu_);
    if (interrupting_pauses_.erase(message_seq(req).value_or(-1))) return;
  }
  DebugStop s;
  s.stop = timeline_->current();
  s.stop.reason = StopReason::Interrupted;
  stopped(s, "pause");
}

void DapSession::restart(const json& req) {
  Debugger& d = debugger();
  // Back to the start of the recording, then on as after configurationDone.
  respond(req);
  event("continued", {{"threadId", timeline_->current().tid}, {"allThreadsContinued", true}});
  DebugStop s;
  s.stop = timeline_->seek(1);
  d.refresh();
  d.reset_hit_counts();  // a hit condition counts from the start again, as in a new run
  if (client_invalidated_) event("invalidated", {{"areas", json::array({"all"})}});
  if (stop_on_entry_) {
    s.stop.reason = StopReason::TraceStart;
    stopped(s, "entry");
    return;
  }
  stopped(running([&] { return d.resume(Direction::Forward); }));
}

void DapSession::seek(const json& req) {
  Debugger& d = debugger();
  int64_t target = required<int64_t>(arguments(req), "event");
  uint64_t count = timeline_->event_count();
  if (target < 1 || uint64_t(target) > count)
    throw RequestError("event " + std::to_string(target) + " is not in this trace (events 1 to " +
                       std::to_string(count) + ")");
  event("continued", {{"threadId", timeline_->current().tid}, {"allThreadsContinued", true}});
  DebugStop s;
  s.stop = running([&] {
             DebugStop r;
             r.stop = timeline_->seek(uint64_t(target));
             return r;
           }).stop;
  d.refresh();
  respond(req, when_json());
  if (client_invalidated_) event("invalidated", {{"areas", json::array({"all"})}});
  stopped(s, "goto");
}

}  // namespace rwd
