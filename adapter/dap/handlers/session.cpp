// Starting and ending a session: initialize, launch (Record & Debug, or replay a trace),
// attach (to a replay served by `rewind dap --listen`), configurationDone, disconnect and
// terminate, cancel.
#include <sys/wait.h>
#include <unistd.h>

#include "adapter/dap/dap_wire.h"
#include "adapter/dap/handlers/dap_handlers.h"
#include "adapter/dap/program_recording.h"
#include "engine/arch/signal_names.h"
#include "engine/trace/trace_dir.h"
#include "engine/trace/trace_reader.h"

namespace rwd::handlers {

using nlohmann::json;

namespace {

/// Refuses a launch or attach without the server's token; the connection then closes.
void check_token(DapContext& c, const dap::SessionArguments& a) {
  if (c.opts.token.empty() || c.authenticated) return;
  if (a.token == c.opts.token) {
    c.authenticated = true;
    return;
  }
  c.ended = true;  // the connection closes after this answer
  throw RequestError(a.has_token ? "wrong token: connection refused"
                                 : "this rewind server needs a \"token\": connection refused");
}

/// The checks and options launch and attach share; `serve_sources` is the default of
/// "sourcesFromServer".
void begin_session(DapContext& c, const dap::SessionArguments& a, bool serve_sources) {
  check_token(c, a);
  if (c.dbg) throw RequestError("a trace is already being debugged in this session");
  c.stop_on_entry = a.stop_on_entry;
  c.serve_sources = a.sources_from_server.value_or(serve_sources);
  c.interp_mode = a.interpreter_frames;
  for (const auto& [from, to] : a.source_map) c.source_map.add(from, to);
  if (c.interp_mode != "merged" && c.interp_mode != "separate" && c.interp_mode != "off")
    throw RequestError("unknown interpreterFrames \"" + c.interp_mode +
                       "\": use \"merged\", \"separate\" or \"off\"");
}

/// The trace a replay launch or an attach names (default the latest), inside the server's
/// traces directory when it has one. Throws Error when there is no such trace.
std::string client_trace(const DapContext& c, const dap::SessionArguments& a) {
  return c.opts.trace_root.empty() ? resolve_trace(a.trace)
                                   : resolve_trace_within(a.trace, c.opts.trace_root);
}

/// Opens `trace` for debugging; `echo_output` sends the recorded output as output events
/// as the replay passes it.
void open_trace(DapContext& c, const std::string& trace, bool echo_output) {
  c.timeline = std::make_unique<Timeline>(trace);
  if (echo_output)
    c.timeline->set_output_listener([&c](OutputStream s, const std::string& bytes) {
      c.out.output(s == OutputStream::Stderr ? "stderr" : "stdout", valid_utf8(bytes));
    });
  c.dbg = std::make_unique<Debugger>(*c.timeline);
  c.scripts = std::make_unique<ScriptStacks>(*c.dbg);
  c.trace_dir = trace;
  TraceReader reader(trace);
  if (reader.summary()) c.exit_code = exit_code_for_status(reader.summary()->root_status);
}

/// Answers a launch or attach whose trace is open, then `process` and `initialized`.
void session_started(DapContext& c, DapRequest& r, const char* start_method) {
  r.respond();
  c.root_pid = c.timeline->current().tid;  // stopped at the first program's first instruction
  c.out.event("process", {{"name", c.timeline->executable()},
                          {"systemProcessId", c.root_pid},
                          {"pointerSize", 64},
                          {"isLocalProcess", !c.serve_sources},
                          {"startMethod", start_method}});
  c.out.event("initialized");
}

/// Record & Debug: records the launch's program, in the client's terminal when asked and
/// the client can, and returns the new trace.
std::string record_program(DapContext& c, const dap::LaunchArguments& a) {
  // "console" as VS Code's C/C++ and Python debuggers name it.
  if (a.console != "internalConsole" && a.console != "integratedTerminal" &&
      a.console != "externalTerminal")
    throw RequestError("unknown console \"" + a.console +
                       "\": use \"internalConsole\", \"integratedTerminal\" or "
                       "\"externalTerminal\"");
  RecordingPlan plan = plan_recording(a.program, c.opts.rewind_exe);
  c.recorded.emplace(plan.path);
  ProgramRecording rec;
  if (a.console != "internalConsole" && c.client.run_in_terminal) {
    rec = record_in_terminal(
        plan, a.console == "externalTerminal" ? "external" : "integrated",
        [&c](const json& terminal_args) {
          json answer = c.out.request("runInTerminal", terminal_args);
          if (answer.value("success", false) != true)
            throw RequestError("the client could not run the program in a terminal: " +
                               answer.value("message", std::string("no reason given")));
        },
        c.recording, c.out.abandoned());
  } else {
    if (a.console != "internalConsole")
      c.out.output("console",
                   "rewind: this client cannot run a program in a terminal (it does not "
                   "support runInTerminal): the program's output is shown here\n");
    // The program's output, as it runs, in a group that says it is the recording's.
    c.out.output_group_start("rewind: recording " + plan.path);
    try {
      rec = record_for_client(
          plan, c.recording,
          [&c](const std::string& category, const std::string& text) {
            c.out.output(category, text);
            c.recorded->keep(category, text);
          },
          c.out.abandoned());
    } catch (...) {
      c.out.output_group_end();
      throw;
    }
    c.out.output_group_end();
  }
  c.exit_code = rec.exit_code;
  std::string how = rec.exit_code > 128 && rec.exit_code < 128 + 65
                        ? "killed by " + signal_name(rec.exit_code - 128)
                        : "exit status " + std::to_string(rec.exit_code);
  c.out.output("console", "rewind: recorded " + rec.program + " (" + how + ") to " + rec.trace_dir +
                              "; now debugging its replay\n");
  return rec.trace_dir;
}

}  // namespace

void initialize(DapContext& c, const dap::InitializeArguments& a, DapRequest& r) {
  c.client = {a.lines_start_at_1, a.supports_invalidated_event, a.supports_run_in_terminal,
              a.supports_progress};
  r.respond(capabilities());
}

void launch(DapContext& c, const dap::LaunchArguments& a, DapRequest& r) {
  begin_session(c, a, false);
  if (a.mode == "record") {
    // The program's output was shown as it ran: the replay does not show it again.
    open_trace(c, record_program(c, a), false);
  } else if (a.mode == "replay") {
    open_trace(c, client_trace(c, a), true);
  } else {
    throw RequestError("unknown launch mode \"" + a.mode + "\": use \"record\" or \"replay\"");
  }
  session_started(c, r, "launch");
}

void attach(DapContext& c, const dap::AttachArguments& a, DapRequest& r) {
  begin_session(c, a, true);  // the client may be on another machine, without the sources
  open_trace(c, client_trace(c, a), true);
  session_started(c, r, "attach");
}

void configuration_done(DapContext& c, const dap::NoArguments&, DapRequest& r) {
  Debugger& d = c.debugger();
  if (c.configured) throw RequestError("configurationDone was already received");
  r.respond();
  c.configured = true;
  if (c.stop_on_entry) {
    DebugStop s;
    s.stop = c.timeline->current();
    c.stopped(s, "entry");
    return;
  }
  c.stopped(c.running([&] { return d.resume(Direction::Forward); }));
}

void disconnect(DapContext& c, const dap::NoArguments&, DapRequest& r) {
  // The recorded program is not running (a replay's processes are rewind's own), so
  // terminateDebuggee and suspendDebuggee change nothing: the replay always ends.
  bool was_debugging = c.dbg != nullptr;
  c.scripts.reset();
  c.dbg.reset();
  c.timeline.reset();
  r.respond();
  if (r.command() == "terminate") {
    if (was_debugging && c.exit_code >= 0) c.out.event("exited", {{"exitCode", c.exit_code}});
    c.out.event("terminated");
  }
  c.ended = true;
}

void cancel(DapContext&, const dap::NoArguments&, DapRequest& r) {
  // A request still waiting was answered "cancelled" when its turn came (the session marked
  // it as it arrived); one already answered cannot be cancelled, which DAP allows.
  r.respond();
}

}  // namespace rwd::handlers
