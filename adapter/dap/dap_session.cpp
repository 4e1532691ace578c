#include "adapter/dap/dap_session.h"

#include <signal.h>

#include "adapter/dap/dap_args.h"
#include "engine/arch/signal_names.h"

namespace rwd {

using nlohmann::json;

DapSession::DapSession(std::function<void(const json&)> send, DapSessionOptions opts)
    : send_(std::move(send)), opts_(std::move(opts)) {}

DapSession::~DapSession() = default;

void DapSession::post(json msg) {
  std::lock_guard lock(send_mu_);
  msg["seq"] = seq_++;
  send_(msg);
}

void DapSession::respond(const json& req, json body) {
  json r = {{"type", "response"},
            {"request_seq", message_seq(req).value_or(0)},
            {"success", true},
            {"command", string_member(req, "command")}};
  if (!body.empty()) r["body"] = std::move(body);
  post(std::move(r));
  answered_ = true;
}

void DapSession::fail(const json& req, const std::string& message, bool show_user) {
  post({{"type", "response"},
        {"request_seq", message_seq(req).value_or(0)},
        {"success", false},
        {"command", string_member(req, "command")},
        {"message", message},
        {"body", {{"error", {{"id", 1}, {"format", message}, {"showUser", show_user}}}}}});
}

void DapSession::event(const std::string& name, json body) {
  json e = {{"type", "event"}, {"event", name}};
  if (!body.empty()) e["body"] = std::move(body);
  post(std::move(e));
}

json DapSession::request_client(const std::string& command, json args) {
  int seq;
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

void DapSession::on_arrival(const std::string& body) {
  json msg = json::parse(body, nullptr, false);
  std::string type = string_member(msg, "type");
  if (type == "response" && msg.contains("request_seq") && msg["request_seq"].is_number_integer()) {
    {
      std::lock_guard lock(reply_mu_);
      replies_[msg["request_seq"].get<int64_t>()] = msg;
    }
    reply_cv_.notify_all();
    return;
  }
  if (type != "request") return;
  std::string command = string_member(msg, "command");
  const json& args = arguments(msg);
  if (command == "pause") {
    if (Timeline* t = running_.load()) {
      t->interrupt();
      std::lock_guard lock(cancel_mu_);
      if (auto seq = message_seq(msg)) interrupting_pauses_.insert(*seq);
    }
  } else if (command == "cancel" && args.contains("requestId") &&
             args["requestId"].is_number_integer()) {
    std::lock_guard lock(cancel_mu_);
    cancelled_.insert(args["requestId"].get<int64_t>());
  } else if (command == "disconnect" || command == "terminate") {
    on_client_gone();
  }
}

void DapSession::on_client_gone() {
  {
    std::lock_guard lock(reply_mu_);
    abandoned_ = true;
  }
  reply_cv_.notify_all();
  if (pid_t child = recording_.load()) ::kill(child, SIGTERM);  // the trace is kept
  if (Timeline* t = running_.load()) t->interrupt();
}

bool DapSession::handle(const std::string& body) {
  json req;
  try {
    req = json::parse(body);
  } catch (const json::exception& e) {
    event("output",
          {{"category", "important"},
           {"output", std::string("rewind: malformed DAP message ignored: ") + e.what() + "\n"}});
    return true;
  }
  // Responses to reverse requests were handed over as they arrived (on_arrival).
  std::string type = string_member(req, "type");
  if (type == "response") return true;
  std::optional<int64_t> seq = message_seq(req);
  if (type != "request" || !seq || *seq < 1 || string_member(req, "command").empty()) {
    // A response must name its request by a seq of 1 or more (the DAP schema): without one,
    // the message is refused in an output event.
    if (type == "request" && seq && *seq >= 1)
      fail(req, "a request needs an integer \"seq\" and a string \"command\"");
    else
      event("output",
            {{"category", "important"},
             {"output", type == "request"
                            ? "rewind: a request without an integer \"seq\" (1 or more) was "
                              "ignored\n"
                            : "rewind: a message that is not a request was ignored\n"}});
    return true;
  }
  {
    std::lock_guard lock(cancel_mu_);
    if (cancelled_.erase(*seq)) {
      fail(req, "cancelled");
      return true;
    }
  }
  dispatch(req);
  return !ended_;
}

const std::vector<DapSession::RequestEntry>& DapSession::requests() {
  using S = DapSession;
  static const std::vector<RequestEntry> table = {
      {"initialize", &S::initialize, nullptr},
      {"launch", &S::launch, nullptr},
      {"attach", &S::attach, nullptr},
      {"configurationDone", &S::configuration_done, "supportsConfigurationDoneRequest"},
      {"disconnect", &S::disconnect, nullptr},
      {"terminate", &S::disconnect, "supportsTerminateRequest"},
      {"restart", &S::restart, "supportsRestartRequest"},
      {"cancel", &S::cancel, "supportsCancelRequest"},
      {"setBreakpoints", &S::set_breakpoints, nullptr},
      {"setFunctionBreakpoints", &S::set_function_breakpoints, "supportsFunctionBreakpoints"},
      {"setInstructionBreakpoints", &S::set_instruction_breakpoints,
       "supportsInstructionBreakpoints"},
      {"setExceptionBreakpoints", &S::set_exception_breakpoints, nullptr},
      {"dataBreakpointInfo", &S::data_breakpoint_info, "supportsDataBreakpoints"},
      {"setDataBreakpoints", &S::set_data_breakpoints, "supportsDataBreakpoints"},
      {"breakpointLocations", &S::breakpoint_locations, "supportsBreakpointLocationsRequest"},
      {"threads", &S::threads, nullptr},
      {"stackTrace", &S::stack_trace, nullptr},
      {"scopes", &S::scopes, nullptr},
      {"variables", &S::variables, nullptr},
      {"evaluate", &S::evaluate, nullptr},
      {"setVariable", &S::set_variable, "supportsSetVariable"},
      {"setExpression", &S::set_expression, "supportsSetExpression"},
      {"completions", &S::completions, "supportsCompletionsRequest"},
      {"exceptionInfo", &S::exception_info, "supportsExceptionInfoRequest"},
      {"continue", &S::resume, nullptr},
      {"reverseContinue", &S::resume, "supportsStepBack"},
      {"next", &S::step, nullptr},
      {"stepIn", &S::step, nullptr},
      {"stepOut", &S::step, nullptr},
      {"stepBack", &S::step, "supportsStepBack"},
      {"pause", &S::pause, nullptr},
      {"modules", &S::modules, "supportsModulesRequest"},
      {"loadedSources", &S::loaded_sources, "supportsLoadedSourcesRequest"},
      {"source", &S::source, nullptr},
      {"readMemory", &S::read_memory, "supportsReadMemoryRequest"},
      {"disassemble", &S::disassemble, "supportsDisassembleRequest"},
      {"rewind/timeline", &S::timeline_events, nullptr},
      {"rewind/seek", &S::seek, nullptr},
      {"rewind/checkpoints", &S::checkpoints, nullptr},
      {"rewind/when", &S::when, nullptr},
      {"rewind/interpreterStack", &S::interpreter_stack, nullptr},
      // Requests of the specification rewind does not serve: announced as unsupported.
      {"restartFrame", nullptr, "supportsRestartFrame"},
      {"gotoTargets", nullptr, "supportsGotoTargetsRequest"},
      {"goto", nullptr, "supportsGotoTargetsRequest"},
      {"stepInTargets", nullptr, "supportsStepInTargetsRequest"},
      {"terminateThreads", nullptr, "supportsTerminateThreadsRequest"},
      {"writeMemory", nullptr, "supportsWriteMemoryRequest"},
  };
  return table;
}

void DapSession::dispatch(const json& req) {
  static const std::map<std::string, Handler> handlers = [] {
    std::map<std::string, Handler> m;
    for (const auto& r : requests())
      if (r.handler) m[r.command] = r.handler;
    return m;
  }();
  std::string command = req["command"];
  // With a token to check, nothing but initialize, and launch or attach carrying the token,
  // is served before the token was given: a client that skips it is refused and its
  // connection closes (docs/dap.md, "Remote debugging").
  if (!opts_.token.empty() && !authenticated_ && command != "initialize" && command != "launch" &&
      command != "attach") {
    ended_ = true;
    fail(req,
         "this rewind server needs a \"token\" in launch or attach before any other "
         "request: connection refused");
    return;
  }
  auto it = handlers.find(command);
  if (it == handlers.end()) {
    fail(req, "rewind does not support the \"" + command + "\" request");
    return;
  }
  answered_ = false;
  try {
    (this->*(it->second))(req);
  } catch (const AnsweredError& e) {
    if (!answered_) fail(req, e.what());  // failed before its response (rewind/seek)
  } catch (const StaleReferenceError& e) {
    fail(req, e.what(), false);
  } catch (const Error& e) {
    fail(req, e.what());
  } catch (const json::exception& e) {
    fail(req, std::string("bad arguments: ") + e.what());
  } catch (const std::exception& e) {
    // Whatever a request provokes, the server answers and goes on serving.
    fail(req, std::string("rewind could not serve this request: ") + e.what());
  }
}

Debugger& DapSession::debugger() {
  if (!debugger_)
    throw RequestError("no trace is being debugged yet: send \"launch\" or \"attach\" first");
  return *debugger_;
}

json DapSession::capabilities() const {
  json filters = json::array(
      {{{"filter", "fatal"},
        {"label", "Fatal signals"},
        {"description", "Stop where a signal killed the program (SIGSEGV, SIGABRT...)"},
        {"default", true}},
       {{"filter", "all"},
        {"label", "All signals"},
        {"description", "Stop at every signal the program received, handled or not"},
        {"default", false}},
       {{"filter", "signals"},
        {"label", "Signals…"},
        {"description", "Stop at the signals named in the condition"},
        {"default", false},
        {"supportsCondition", true},
        {"conditionDescription", "Signal names or numbers, e.g. \"SIGUSR1 SIGALRM\""}}});
  // Features of requests served (their arguments' options), and behaviour.
  json caps = {{"supportsConditionalBreakpoints", true},
               {"supportsHitConditionalBreakpoints", true},
               {"supportsEvaluateForHovers", true},
               {"exceptionBreakpointFilters", filters},
               {"completionTriggerCharacters", json::array({".", ">"})},
               {"supportsExceptionOptions", false},
               {"supportsValueFormattingOptions", false},
               {"supportTerminateDebuggee", true},
               {"supportsDelayedStackTraceLoading", true},
               {"supportsLogPoints", true},
               {"supportsDataBreakpointBytes", true},
               {"supportsClipboardContext", true},
               {"supportsSteppingGranularity", true},
               {"supportsExceptionFilterOptions", true},
               {"supportsSingleThreadExecutionRequests", false}};
  // One capability per request: true exactly when the request is served.
  for (const auto& r : requests())
    if (r.capability && !(caps.contains(r.capability) && caps[r.capability] == true))
      caps[r.capability] = r.handler != nullptr;
  return caps;
}

void DapSession::initialize(const json& req) {
  const json& args = arguments(req);
  lines_from_1_ = args.value("linesStartAt1", true);
  client_invalidated_ = args.value("supportsInvalidatedEvent", false);
  client_run_in_terminal_ = args.value("supportsRunInTerminalRequest", false);
  respond(req, capabilities());
}

void DapSession::disconnect(const json& req) {
  // The recorded program is not running (a replay's processes are rewind's own), so
  // terminateDebuggee and suspendDebuggee change nothing: the replay always ends.
  bool was_debugging = debugger_ != nullptr;
  scripts_.reset();
  debugger_.reset();
  timeline_.reset();
  respond(req);
  if (req["command"] == "terminate") {
    if (was_debugging && exit_code_ >= 0) event("exited", {{"exitCode", exit_code_}});
    event("terminated");
  }
  ended_ = true;
}

void DapSession::cancel(const json& req) {
  // A request still waiting was answered "cancelled" when its turn came (on_arrival marked
  // it); one already answered cannot be cancelled, which DAP allows.
  respond(req);
}

json DapSession::source_json(const std::string& path) {
  json s = {{"name", path.substr(path.find_last_of('/') + 1)}, {"path", path}};
  handed_out_.insert(path);
  if (serve_sources_) {
    auto [it, added] = source_refs_.emplace(path, int(source_paths_.size()) + 1);
    if (added) source_paths_.push_back(path);
    s["sourceReference"] = it->second;
  }
  return s;
}

void DapSession::announce_changes() {
  // Threads that appeared or ended since the last stop.
  std::set<pid_t> now;
  std::map<pid_t, std::string> processes;  // recorded pid -> program
  for (const TaskInfo& t : timeline_->tasks()) {
    now.insert(t.tid);
    processes[t.pid] = t.program;  // the same for every thread of a process
  }
  for (pid_t t : now)
    if (!known_threads_.count(t)) event("thread", {{"reason", "started"}, {"threadId", t}});
  for (pid_t t : known_threads_)
    if (!now.count(t)) event("thread", {{"reason", "exited"}, {"threadId", t}});
  known_threads_ = now;
  // Processes: the launch's process event named the first; each later one that appears gets
  // its own (DAP's "the debugger has begun debugging a new process"). DAP has no event for a
  // process that ends: the console says so, as gdb prints "[Inferior 2 (process N) exited]".
  std::string at = " at event " + std::to_string(timeline_->current().event);
  for (auto& [pid, program] : processes) {
    if (known_processes_.count(pid)) continue;
    if (pid != root_pid_) {  // the first process had its event when the session started
      event("process", {{"name", program.empty() ? "process " + std::to_string(pid) : program},
                        {"systemProcessId", pid},
                        {"isLocalProcess", !serve_sources_},
                        {"startMethod", "attach"},
                        {"pointerSize", 64}});
      event("output", {{"category", "console"},
                       {"output", "rewind: process " + std::to_string(pid) + " (" + program +
                                      ") is live" + at + "\n"}});
    }
  }
  for (auto& [pid, program] : known_processes_)
    if (!processes.count(pid))
      event("output", {{"category", "console"},
                       {"output", "rewind: process " + std::to_string(pid) + " (" + program +
                                      ") is not live" + at + "\n"}});
  known_processes_ = processes;
  // Modules mapped or unmapped.
  std::map<std::string, json> mods;
  for (const auto& m : debugger_->modules().modules()) {
    json j = module_json(*m);
    mods[j["id"].get<std::string>()] = j;
  }
  for (auto& [id, m] : mods)
    if (!known_modules_.count(id)) event("module", {{"reason", "new"}, {"module", m}});
  for (auto& [id, m] : known_modules_)
    if (!mods.count(id)) event("module", {{"reason", "removed"}, {"module", m}});
  known_modules_ = std::move(mods);
  // Breakpoints that bound (or unbound) in libraries loaded since.
  for (const Breakpoint& bp : debugger_->take_rebound_breakpoints())
    event("breakpoint", {{"reason", "changed"}, {"breakpoint", breakpoint_json(bp)}});
}

void DapSession::stopped(const DebugStop& d, const std::string& step_reason) {
  frames_.clear();
  refs_.clear();
  if (scripts_) scripts_->new_stop();
  last_stop_ = d.stop;
  for (const std::string& line : d.log)
    event("output", {{"category", "console"}, {"output", line + "\n"}});
  announce_changes();
  json body = {{"threadId", d.stop.tid}, {"allThreadsStopped", true}};
  std::vector<int> ids = d.breakpoint_ids;
  switch (d.stop.reason) {
    case StopReason::Breakpoint: {
      body["reason"] = "breakpoint";
      const Breakpoint* bp = ids.empty() ? nullptr : debugger_->breakpoint(ids.front());
      if (bp && breakpoint_kind(bp->spec) == BreakpointKind::Function)
        body["reason"] = "function breakpoint";
      if (bp && breakpoint_kind(bp->spec) == BreakpointKind::Instruction)
        body["reason"] = "instruction breakpoint";
      if (!d.error.empty()) body["description"] = d.error;
      if (ids.empty() && step_reason != "step") body["reason"] = step_reason;
      break;
    }
    case StopReason::Watchpoint:
      body["reason"] = "data breakpoint";
      body["description"] = data_breakpoint_description(d.stop, ids);
      break;
    case StopReason::Signal:
      body["reason"] = "exception";
      body["description"] =
          "Signal " + signal_name(d.stop.signo) + " (" + signal_description(d.stop.signo) + ")";
      body["text"] = signal_name(d.stop.signo);
      break;
    case StopReason::TraceStart:
      body["reason"] = step_reason == "step" ? "step" : step_reason;
      body["description"] = "The start of the recording";
      break;
    case StopReason::TraceEnd:
      body["reason"] = "pause";
      body["description"] = "The end of the recording (step back or reverse-continue from here)";
      break;
    case StopReason::Interrupted:
      body["reason"] = "pause";
      break;
    default:
      body["reason"] = step_reason;
      break;
  }
  if (!ids.empty()) body["hitBreakpointIds"] = ids;
  event("stopped", body);
}

}  // namespace rwd
