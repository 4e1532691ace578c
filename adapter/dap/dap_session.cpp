#include "adapter/dap/dap_session.h"

#include <map>

#include "engine/arch/signal_names.h"
#include "engine/trace/trace_dir.h"

namespace rwd {

using nlohmann::json;

namespace {

/// A request that cannot be served; the message goes into the error response.
struct RequestError : Error {
  using Error::Error;
};

const json& arguments(const json& req) {
  static const json empty = json::object();
  auto it = req.find("arguments");
  return it != req.end() && it->is_object() ? *it : empty;
}

template <class T>
T required(const json& args, const char* name) {
  auto it = args.find(name);
  if (it == args.end()) throw RequestError(std::string("missing argument \"") + name + "\"");
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw RequestError(std::string("argument \"") + name + "\" has the wrong type");
  }
}

}  // namespace

DapSession::DapSession(std::function<void(const json&)> send) : send_(std::move(send)) {}
DapSession::~DapSession() = default;

void DapSession::respond(const json& req, json body) {
  json r = {{"seq", seq_++},
            {"type", "response"},
            {"request_seq", req.value("seq", 0)},
            {"success", true},
            {"command", req.value("command", "")}};
  if (!body.empty()) r["body"] = std::move(body);
  send_(r);
}

void DapSession::fail(const json& req, const std::string& message) {
  send_({{"seq", seq_++},
         {"type", "response"},
         {"request_seq", req.value("seq", 0)},
         {"success", false},
         {"command", req.value("command", "")},
         {"message", message},
         {"body", {{"error", {{"id", 1}, {"format", message}, {"showUser", true}}}}}});
}

void DapSession::event(const std::string& name, json body) {
  json e = {{"seq", seq_++}, {"type", "event"}, {"event", name}};
  if (!body.empty()) e["body"] = std::move(body);
  send_(e);
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
  if (!req.is_object() || req.value("type", "") != "request" || !req.contains("command") ||
      !req["command"].is_string()) {
    if (req.is_object() && req.value("type", "") == "request")
      fail(req, "a request needs a command");
    else
      event("output", {{"category", "important"},
                       {"output", "rewind: a message that is not a request was ignored\n"}});
    return true;
  }
  static const std::map<std::string, Handler> handlers = {
      {"initialize", &DapSession::initialize},
      {"launch", &DapSession::launch},
      {"configurationDone", &DapSession::configuration_done},
      {"disconnect", &DapSession::disconnect},
      {"terminate", &DapSession::disconnect},
      {"setBreakpoints", &DapSession::set_breakpoints},
      {"setFunctionBreakpoints", &DapSession::set_function_breakpoints},
      {"setExceptionBreakpoints", &DapSession::set_exception_breakpoints},
      {"threads", &DapSession::threads},
      {"stackTrace", &DapSession::stack_trace},
      {"scopes", &DapSession::scopes},
      {"variables", &DapSession::variables},
      {"evaluate", &DapSession::evaluate},
      {"continue", &DapSession::resume},
      {"reverseContinue", &DapSession::resume},
      {"next", &DapSession::step},
      {"stepIn", &DapSession::step},
      {"stepOut", &DapSession::step},
      {"stepBack", &DapSession::step},
  };
  std::string command = req["command"];
  auto it = handlers.find(command);
  if (it == handlers.end()) {
    fail(req, "rewind does not support the \"" + command + "\" request yet");
    return true;
  }
  try {
    (this->*(it->second))(req);
  } catch (const Error& e) {
    fail(req, e.what());
  } catch (const json::exception& e) {
    fail(req, std::string("bad arguments: ") + e.what());
  }
  return !ended_;
}

Debugger& DapSession::debugger(const json&) {
  if (!debugger_) throw RequestError("no trace is being debugged yet: send \"launch\" first");
  return *debugger_;
}

void DapSession::initialize(const json& req) {
  respond(req, {{"supportsConfigurationDoneRequest", true},
                {"supportsFunctionBreakpoints", true},
                {"supportsConditionalBreakpoints", true},
                {"supportsHitConditionalBreakpoints", true},
                {"supportsLogPoints", true},
                {"supportsEvaluateForHovers", true},
                {"supportsStepBack", true},
                {"supportsTerminateRequest", true},
                {"exceptionBreakpointFilters", json::array()}});
}

void DapSession::launch(const json& req) {
  const json& args = arguments(req);
  std::string mode = args.value("mode", "record");
  if (mode != "replay")
    throw RequestError("launch mode \"" + mode +
                       "\" is not supported yet: record with `rewind record`, then launch with "
                       "\"mode\": \"replay\"");
  std::string trace = resolve_trace(args.value("trace", ""));
  stop_on_entry_ = args.value("stopOnEntry", false);
  timeline_ = std::make_unique<Timeline>(trace);
  debugger_ = std::make_unique<Debugger>(*timeline_);
  respond(req);
  event("initialized");
}

void DapSession::configuration_done(const json& req) {
  Debugger& d = debugger(req);
  respond(req);
  configured_ = true;
  if (stop_on_entry_) {
    DebugStop s;
    s.stop = timeline_->current();
    stopped(s, "entry");
    return;
  }
  stopped(d.resume(Direction::Forward));
}

void DapSession::disconnect(const json& req) {
  respond(req);
  debugger_.reset();
  timeline_.reset();
  ended_ = true;
}

void DapSession::set_breakpoints(const json& req) {
  Debugger& d = debugger(req);
  const json& args = arguments(req);
  json source = required<json>(args, "source");
  std::string path = source.value("path", "");
  if (path.empty()) throw RequestError("setBreakpoints needs source.path");
  std::vector<BreakpointSpec> specs;
  for (const json& b : args.value("breakpoints", json::array())) {
    BreakpointSpec s;
    s.line = required<uint32_t>(b, "line");
    s.condition = b.value("condition", "");
    s.hit_condition = b.value("hitCondition", "");
    s.log_message = b.value("logMessage", "");
    specs.push_back(s);
  }
  json out = json::array();
  for (const Breakpoint& bp : d.set_source_breakpoints(path, specs)) {
    json j = {{"id", bp.id}, {"verified", !bp.addrs.empty()}};
    if (bp.line) j["line"] = bp.line;
    if (!bp.message.empty()) j["message"] = bp.message;
    j["source"] = {{"path", path}};
    out.push_back(j);
  }
  respond(req, {{"breakpoints", out}});
}

void DapSession::set_function_breakpoints(const json& req) {
  Debugger& d = debugger(req);
  std::vector<BreakpointSpec> specs;
  for (const json& b : required<json>(arguments(req), "breakpoints")) {
    BreakpointSpec s;
    s.function = required<std::string>(b, "name");
    s.condition = b.value("condition", "");
    s.hit_condition = b.value("hitCondition", "");
    specs.push_back(s);
  }
  json out = json::array();
  for (const Breakpoint& bp : d.set_function_breakpoints(specs)) {
    json j = {{"id", bp.id}, {"verified", !bp.addrs.empty()}};
    if (bp.line) j["line"] = bp.line;
    if (!bp.file.empty()) j["source"] = {{"path", bp.file}};
    if (!bp.message.empty()) j["message"] = bp.message;
    out.push_back(j);
  }
  respond(req, {{"breakpoints", out}});
}

void DapSession::set_exception_breakpoints(const json& req) {
  // No filters are announced yet: recorded fatal signals always stop (reason "exception").
  respond(req, {{"breakpoints", json::array()}});
}

void DapSession::threads(const json& req) {
  Debugger& d = debugger(req);
  json out = json::array();
  for (const TaskInfo& t : d.timeline().tasks())
    out.push_back({{"id", t.tid}, {"name", "task " + std::to_string(t.tid)}});
  respond(req, {{"threads", out}});
}

pid_t DapSession::thread_arg(const json& req) {
  const json& args = arguments(req);
  if (args.contains("threadId")) return required<pid_t>(args, "threadId");
  return timeline_->current().tid;
}

void DapSession::stack_trace(const json& req) {
  Debugger& d = debugger(req);
  pid_t tid = thread_arg(req);
  const json& args = arguments(req);
  size_t start = args.value("startFrame", 0), levels = args.value("levels", 0);
  const auto& stack = d.stack(tid);
  json out = json::array();
  size_t end = levels ? std::min(stack.size(), start + levels) : stack.size();
  for (size_t i = start; i < end; ++i) {
    const StackFrame& f = stack[i];
    frames_.emplace_back(tid, i);
    json j = {{"id", int(frames_.size())},
              {"name", f.function.empty() ? hex(f.pc) : f.function},
              {"line", f.line},
              {"column", f.line ? std::max<uint32_t>(f.column, 1) : 0},
              {"instructionPointerReference", hex(f.pc)}};
    if (!f.file.empty()) {
      std::string name = f.file.substr(f.file.find_last_of('/') + 1);
      j["source"] = {{"name", name}, {"path", f.file}};
    } else {
      j["presentationHint"] = "subtle";
    }
    out.push_back(j);
  }
  respond(req, {{"stackFrames", out}, {"totalFrames", stack.size()}});
}

int DapSession::ref_for(VarRef r) {
  refs_.push_back(std::move(r));
  return int(refs_.size());
}

void DapSession::scopes(const json& req) {
  debugger(req);
  int id = required<int>(arguments(req), "frameId");
  if (id < 1 || size_t(id) > frames_.size())
    throw RequestError("unknown frameId " + std::to_string(id));
  auto [tid, frame] = frames_[size_t(id) - 1];
  json out = json::array();
  out.push_back({{"name", "Locals"},
                 {"presentationHint", "locals"},
                 {"variablesReference", ref_for({VarRef::Locals, tid, frame, {}})},
                 {"expensive", false}});
  out.push_back({{"name", "Arguments"},
                 {"presentationHint", "arguments"},
                 {"variablesReference", ref_for({VarRef::Arguments, tid, frame, {}})},
                 {"expensive", false}});
  out.push_back({{"name", "Globals"},
                 {"variablesReference", ref_for({VarRef::Globals, tid, frame, {}})},
                 {"expensive", false}});
  respond(req, {{"scopes", out}});
}

std::string DapSession::format(const Value& v, pid_t tid) {
  FormatOptions opt = symbolizing_options(debugger_->modules());
  return format_value(v, debugger_->target(tid), opt);
}

json DapSession::variable_json(const std::string& name, const Value& v, pid_t tid) {
  json j = {{"name", name}, {"value", format(v, tid)}, {"type", v.type ? type_name(*v.type) : ""}};
  size_t n = child_count(v, debugger_->target(tid));
  j["variablesReference"] = n ? ref_for({VarRef::Children, tid, 0, v}) : 0;
  const Type* s = strip(v.type.get());
  if (n && s && s->kind == TypeKind::Array) j["indexedVariables"] = n;
  if (v.loc.kind == Location::Kind::Memory) j["memoryReference"] = hex(v.loc.addr);
  return j;
}

void DapSession::variables(const json& req) {
  Debugger& d = debugger(req);
  const json& args = arguments(req);
  int id = required<int>(args, "variablesReference");
  if (id < 1 || size_t(id) > refs_.size())
    throw RequestError("unknown variablesReference " + std::to_string(id));
  VarRef r = refs_[size_t(id) - 1];
  json out = json::array();
  if (r.kind == VarRef::Children) {
    size_t start = args.value("start", 0), count = args.value("count", 0);
    for (const NamedValue& c : children(r.value, d.target(r.tid), start, count ? count : SIZE_MAX))
      out.push_back(variable_json(c.name, c.value, r.tid));
  } else {
    FrameVariables& vars = d.variables(r.tid);
    std::vector<Variable> list = r.kind == VarRef::Locals      ? vars.locals(r.frame)
                                 : r.kind == VarRef::Arguments ? vars.arguments(r.frame)
                                                               : vars.unit_globals(r.frame);
    for (const Variable& v : list) out.push_back(variable_json(v.name, v.value, r.tid));
  }
  respond(req, {{"variables", out}});
}

void DapSession::evaluate(const json& req) {
  Debugger& d = debugger(req);
  const json& args = arguments(req);
  std::string expr = required<std::string>(args, "expression");
  pid_t tid = timeline_->current().tid;
  size_t frame = 0;
  if (args.contains("frameId")) {
    int id = required<int>(args, "frameId");
    if (id < 1 || size_t(id) > frames_.size())
      throw RequestError("unknown frameId " + std::to_string(id));
    std::tie(tid, frame) = frames_[size_t(id) - 1];
  }
  Value v = d.evaluate(tid, frame, expr);
  json var = variable_json(expr, v, tid);
  json body = {{"result", var["value"]}, {"variablesReference", var["variablesReference"]}};
  if (var.contains("type")) body["type"] = var["type"];
  if (var.contains("memoryReference")) body["memoryReference"] = var["memoryReference"];
  respond(req, body);
}

void DapSession::resume(const json& req) {
  Debugger& d = debugger(req);
  bool back = req["command"] == "reverseContinue";
  respond(req, {{"allThreadsContinued", true}});
  stopped(d.resume(back ? Direction::Backward : Direction::Forward));
}

void DapSession::step(const json& req) {
  Debugger& d = debugger(req);
  std::string cmd = req["command"];
  pid_t tid = thread_arg(req);
  std::string granularity = arguments(req).value("granularity", "line");
  respond(req);
  Direction dir = cmd == "stepBack" ? Direction::Backward : Direction::Forward;
  if (granularity == "instruction") {
    stopped(d.step_instruction(tid, dir));
    return;
  }
  StepKind kind = cmd == "stepIn"    ? StepKind::Into
                  : cmd == "stepOut" ? StepKind::Out
                                     : StepKind::Over;
  stopped(d.step(tid, kind, dir));
}

void DapSession::stopped(const DebugStop& d, const std::string& step_reason) {
  frames_.clear();
  refs_.clear();
  for (const std::string& line : d.log)
    event("output", {{"category", "console"}, {"output", line + "\n"}});
  json body = {{"threadId", d.stop.tid}, {"allThreadsStopped", true}};
  switch (d.stop.reason) {
    case StopReason::Breakpoint:
      body["reason"] = "breakpoint";
      if (!d.breakpoint_ids.empty()) body["hitBreakpointIds"] = d.breakpoint_ids;
      if (!d.error.empty()) body["description"] = d.error;
      break;
    case StopReason::Watchpoint:
      body["reason"] = "data breakpoint";
      break;
    case StopReason::Signal:
      body["reason"] = "exception";
      body["description"] = "Signal " + signal_name(d.stop.signo);
      body["text"] = signal_name(d.stop.signo);
      break;
    case StopReason::TraceStart:
      body["reason"] = step_reason == "entry" ? "entry" : "step";
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
  event("stopped", body);
}

}  // namespace rwd
