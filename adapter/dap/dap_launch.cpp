// Starting a session: launch (Record & Debug, or replay a trace), attach (to a replay served
// by `rewind dap --listen`), configurationDone.
#include <sys/wait.h>
#include <unistd.h>

#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_session.h"
#include "adapter/dap/dap_wire.h"
#include "adapter/dap/program_recording.h"
#include "engine/arch/signal_names.h"
#include "engine/trace/trace_dir.h"
#include "engine/trace/trace_reader.h"

namespace rwd {

using nlohmann::json;

void DapSession::check_token(const json& args) {
  if (opts_.token.empty() || authenticated_) return;
  if (string_member(args, "token") == opts_.token) {
    authenticated_ = true;
    return;
  }
  ended_ = true;  // the connection closes after this answer
  throw RequestError(args.contains("token") ? "wrong token: connection refused"
                                            : "this rewind server needs a \"token\": connection "
                                              "refused");
}

std::string DapSession::client_trace(const json& args) {
  std::string arg = optional_arg<std::string>(args, "trace", "");
  return opts_.trace_root.empty() ? resolve_trace(arg)
                                  : resolve_trace_within(arg, opts_.trace_root);
}

void DapSession::open_trace(const std::string& trace, bool echo_output) {
  timeline_ = std::make_unique<Timeline>(trace);
  if (echo_output)
    timeline_->set_output_listener([this](OutputStream s, const std::string& bytes) {
      event("output", {{"category", s == OutputStream::Stderr ? "stderr" : "stdout"},
                       {"output", valid_utf8(bytes)}});
    });
  debugger_ = std::make_unique<Debugger>(*timeline_);
  scripts_ = std::make_unique<ScriptStacks>(*debugger_);
  trace_dir_ = trace;
  events_.reset();
  TraceReader reader(trace);
  if (reader.summary()) exit_code_ = exit_code_for_status(reader.summary()->root_status);
}

void DapSession::begin_session(const json& args, bool serve_sources) {
  check_token(args);
  if (debugger_) throw RequestError("a trace is already being debugged in this session");
  stop_on_entry_ = optional_arg<bool>(args, "stopOnEntry", false);
  serve_sources_ = optional_arg<bool>(args, "sourcesFromServer", serve_sources);
  interp_mode_ = optional_arg<std::string>(args, "interpreterFrames", "merged");
  if (interp_mode_ != "merged" && interp_mode_ != "separate" && interp_mode_ != "off")
    throw RequestError("unknown interpreterFrames \"" + interp_mode_ +
                       "\": use \"merged\", \"separate\" or \"off\"");
}

void DapSession::session_started(const json& req, const char* start_method) {
  respond(req);
  root_pid_ = timeline_->current().tid;  // stopped at the first program's first instruction
  event("process", {{"name", timeline_->executable()},
                    {"systemProcessId", root_pid_},
                    {"pointerSize", 64},
                    {"isLocalProcess", !serve_sources_},
                    {"startMethod", start_method}});
  event("initialized");
}

void DapSession::launch(const json& req) {
  const json& args = arguments(req);
  begin_session(args, false);
  std::string mode = optional_arg<std::string>(args, "mode", "record");
  std::string trace;
  if (mode == "record") {
    // "console" as VS Code's C/C++ and Python debuggers name it.
    std::string console = optional_arg<std::string>(args, "console", "internalConsole");
    if (console != "internalConsole" && console != "integratedTerminal" &&
        console != "externalTerminal")
      throw RequestError("unknown console \"" + console +
                         "\": use \"internalConsole\", \"integratedTerminal\" or "
                         "\"externalTerminal\"");
    RecordingPlan plan = plan_recording(args, opts_.rewind_exe);
    ProgramRecording rec;
    if (console != "internalConsole" && client_run_in_terminal_) {
      rec = record_in_terminal(
          plan, console == "externalTerminal" ? "external" : "integrated",
          [this](const json& terminal_args) {
            json r = request_client("runInTerminal", terminal_args);
            if (r.value("success", false) != true)
              throw RequestError("the client could not run the program in a terminal: " +
                                 r.value("message", std::string("no reason given")));
          },
          recording_, abandoned_);
    } else {
      if (console != "internalConsole")
        event("output", {{"category", "console"},
                         {"output",
                          "rewind: this client cannot run a program in a terminal (it does "
                          "not support runInTerminal): the program's output is shown here\n"}});
      rec = record_for_client(plan, recording_,
                              [this](const std::string& category, const std::string& text) {
                                event("output", {{"category", category}, {"output", text}});
                              });
    }
    exit_code_ = rec.exit_code;
    std::string how = rec.exit_code > 128 && rec.exit_code < 128 + 65
                          ? "killed by " + signal_name(rec.exit_code - 128)
                          : "exit status " + std::to_string(rec.exit_code);
    event("output", {{"category", "console"},
                     {"output", "rewind: recorded " + rec.program + " (" + how + ") to " +
                                    rec.trace_dir + "; now debugging its replay\n"}});
    trace = rec.trace_dir;
    // The program's output was shown as it ran: the replay does not show it again.
    open_trace(trace, false);
  } else if (mode == "replay") {
    open_trace(client_trace(args), true);
  } else {
    throw RequestError("unknown launch mode \"" + mode + "\": use \"record\" or \"replay\"");
  }
  session_started(req, "launch");
}

void DapSession::attach(const json& req) {
  const json& args = arguments(req);
  begin_session(args, true);  // the client may be on another machine, without the sources
  open_trace(client_trace(args), true);
  session_started(req, "attach");
}

void DapSession::configuration_done(const json& req) {
  Debugger& d = debugger();
  if (configured_) throw RequestError("configurationDone was already received");
  respond(req);
  configured_ = true;
  if (stop_on_entry_) {
    DebugStop s;
    s.stop = timeline_->current();
    stopped(s, "entry");
    return;
  }
  stopped(running([&] { return d.resume(Direction::Forward); }));
}

}  // namespace rwd
