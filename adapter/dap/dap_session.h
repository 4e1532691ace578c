// One Debug Adapter Protocol session over a replayed trace (DESIGN.md "The DAP adapter"):
// requests in, responses and events out, the engine's Debugger underneath. The handlers live
// in several files by subject: dap_session.cpp (dispatch, life cycle, stops), dap_launch.cpp
// (launch, attach, Record & Debug), dap_breakpoints.cpp, dap_inspect.cpp (threads, stacks,
// variables, evaluate), dap_execution.cpp (continue, steps, pause, restart, seek),
// dap_program.cpp (modules, sources, memory, disassembly), dap_timeline.cpp (rewind/*).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "adapter/dap/event_index.h"
#include "engine/debugger/debugger.h"
#include "engine/debugger/script_stacks.h"

namespace rwd {

/// How a session is served.
struct DapSessionOptions {
  /// When non-empty, launch and attach must carry `"token": token` (a non-loopback
  /// `rewind dap --listen`); a wrong or missing token is refused and the session ends.
  std::string token;
  /// The rewind executable, run as `rewind record` for Record & Debug launches.
  std::string rewind_exe = "/proc/self/exe";
  /// When non-empty, replay and attach open only traces inside this directory (a TCP server
  /// without --allow-any-trace): a path outside it, or missing, gets one and the same
  /// answer, so that a client cannot probe the server's file system.
  std::string trace_root;
  /// When positive, a client that has not given the token within this many milliseconds of
  /// connecting is disconnected (a TCP server: one idle connection must not hold it).
  int auth_timeout_ms = 0;
};

/// Handles the requests of one client. handle() is called from one thread, one message at
/// a time; on_arrival() from the thread that reads the connection.
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
  /// recording in progress. Thread-safe.
  void on_arrival(const std::string& body);
  /// Tells the session its client went away without disconnecting: anything running stops.
  void on_client_gone();
  /// True once the client gave the right token, or when the session needs none.
  /// Thread-safe (read by the connection's reading thread for opts.auth_timeout_ms).
  bool authenticated() const { return opts_.token.empty() || authenticated_; }
  /// Sends `text` as an output event of category "important" (VS Code shows it in a
  /// notification). Call from the handling thread.
  void tell(const std::string& text) {
    event("output", {{"category", "important"}, {"output", text}});
  }

 private:
  using Handler = void (DapSession::*)(const nlohmann::json& req);
  /// A DAP request rewind knows: its command, the handler that serves it (nullptr: not
  /// supported, answered with an error), and the capability that announces it to clients
  /// (DAP specification, "Capabilities"; nullptr: the request needs none). initialize's
  /// capabilities are built from this one table, so that one is announced exactly when its
  /// request is served.
  struct RequestEntry {
    const char* command;
    Handler handler;
    const char* capability;
  };
  /// Every request rewind knows, in one table (dap_session.cpp).
  static const std::vector<RequestEntry>& requests();
  /// What a variablesReference names: a scope of a frame, or a value's children.
  struct VarRef {
    enum Kind { Locals, Arguments, Globals, Registers, Children, InterpLocals } kind;
    pid_t tid = 0;
    size_t frame = 0;  ///< native frame index; InterpLocals: index in interp_stack(tid)
    Value value;
  };
  /// What a frameId names: a native frame, or (interp >= 0) an interpreter frame, with the
  /// native eval-loop frame it runs in.
  struct FrameRef {
    pid_t tid = 0;
    size_t frame = 0;
    int interp = -1;
  };
  /// A data breakpoint as set by setDataBreakpoints.
  struct DataBreakpoint {
    int id = 0;
    std::string name;  ///< what the user watches ("counter", "p->next")
    WatchInfo watch;
    WatchKind kind = WatchKind::Write;
  };

  // dap_session.cpp: messages and state.
  void post(nlohmann::json msg);
  void respond(const nlohmann::json& req, nlohmann::json body = nlohmann::json::object());
  void fail(const nlohmann::json& req, const std::string& message, bool show_user = true);
  void event(const std::string& name, nlohmann::json body = nlohmann::json::object());
  /// Sends a reverse request (DAP runInTerminal) and waits for the client's response, which
  /// the reading thread hands over (on_arrival). Throws Error when the client goes away or
  /// does not answer within a minute.
  nlohmann::json request_client(const std::string& command, nlohmann::json args);
  void dispatch(const nlohmann::json& req);
  Debugger& debugger();  // throws when not launched
  void stopped(const DebugStop& d, const std::string& step_reason = "step");
  void announce_changes();
  nlohmann::json capabilities() const;
  void initialize(const nlohmann::json& req);
  void disconnect(const nlohmann::json& req);
  void cancel(const nlohmann::json& req);
  int line_out(uint32_t line) const { return int(line) - (lines_from_1_ ? 0 : 1); }
  /// A client's line number as rewind's (from 1). Throws RequestError when it is out of
  /// range (negative, or past 2^31): never truncated to another line.
  uint32_t line_in(int64_t line) const;
  nlohmann::json source_json(const std::string& path);

  // dap_launch.cpp
  void launch(const nlohmann::json& req);
  void attach(const nlohmann::json& req);
  void check_token(const nlohmann::json& args);
  /// The checks and options launch and attach share; `serve_sources` is the default of
  /// "sourcesFromServer".
  void begin_session(const nlohmann::json& args, bool serve_sources);
  /// Answers a launch or attach whose trace is open, then `process` and `initialized`.
  void session_started(const nlohmann::json& req, const char* start_method);
  /// The trace a replay launch or an attach names ("trace"; default the latest), inside
  /// opts_.trace_root when that is set. Throws Error when there is no such trace.
  std::string client_trace(const nlohmann::json& args);
  void open_trace(const std::string& trace, bool echo_output);
  void configuration_done(const nlohmann::json& req);

  // dap_breakpoints.cpp
  void set_breakpoints(const nlohmann::json& req);
  void set_function_breakpoints(const nlohmann::json& req);
  void set_instruction_breakpoints(const nlohmann::json& req);
  void set_exception_breakpoints(const nlohmann::json& req);
  void data_breakpoint_info(const nlohmann::json& req);
  void set_data_breakpoints(const nlohmann::json& req);
  void breakpoint_locations(const nlohmann::json& req);
  nlohmann::json breakpoint_json(const Breakpoint& bp);
  void respond_breakpoints(const nlohmann::json& req, const std::vector<Breakpoint>& bps);
  std::string data_breakpoint_description(const StopInfo& stop, std::vector<int>& ids);

  // dap_inspect.cpp
  void threads(const nlohmann::json& req);
  void stack_trace(const nlohmann::json& req);
  void scopes(const nlohmann::json& req);
  void variables(const nlohmann::json& req);
  void evaluate(const nlohmann::json& req);
  void set_variable(const nlohmann::json& req);
  void set_expression(const nlohmann::json& req);
  void completions(const nlohmann::json& req);
  void exception_info(const nlohmann::json& req);
  pid_t thread_arg(const nlohmann::json& req);
  std::pair<pid_t, size_t> frame_arg(const nlohmann::json& req, bool required);
  /// The frame a request's frameId names (the current thread's top frame without one).
  FrameRef frame_ref(const nlohmann::json& req, bool required);
  int ref_for(VarRef r);
  nlohmann::json variable_json(const std::string& name, const Value& v, pid_t tid);
  std::string format(const Value& v, pid_t tid);
  nlohmann::json register_variables(pid_t tid, size_t frame);
  nlohmann::json assign(pid_t tid, size_t frame, const std::string& lvalue,
                        const std::string& value);

  // dap_execution.cpp
  /// Runs `op` (a resume or step) so that pause and disconnect can interrupt it.
  DebugStop running(const std::function<DebugStop()>& op);
  void resume(const nlohmann::json& req);
  void step(const nlohmann::json& req);
  void pause(const nlohmann::json& req);
  void restart(const nlohmann::json& req);
  void seek(const nlohmann::json& req);

  // dap_program.cpp
  void modules(const nlohmann::json& req);
  void loaded_sources(const nlohmann::json& req);
  /// The primary source file of every compile unit with debug information in the
  /// program's modules (absolute paths, whether or not they exist here).
  static std::set<std::string> unit_sources(Debugger& d);
  void source(const nlohmann::json& req);
  void read_memory(const nlohmann::json& req);
  void disassemble(const nlohmann::json& req);
  nlohmann::json module_json(const Module& m);

  // dap_interp.cpp: Python frames (engine/interp) in stackTrace, scopes, evaluate.
  /// The Python or R frames of task `tid` at this stop (engine/debugger/script_stacks.h);
  /// empty when the program is not a supported CPython or GNU R, or with
  /// "interpreterFrames": "off".
  const std::vector<InterpFrame>& interp_stack(pid_t tid);
  /// stackTrace's frames in "merged" mode (Interpreter::mix): the interpreter's own native
  /// frames replaced by the script frames they run.
  std::vector<MixedFrame> merged_stack(pid_t tid);
  /// Whether the innermost frame stackTrace shows for `tid` is a Python frame (merged mode):
  /// DAP steps then go by the script's lines.
  bool python_on_top(pid_t tid);
  nlohmann::json interp_frame_json(const InterpFrame& f, int id);
  /// The interpreter frame a frameId names, or nullptr for a native one.
  const InterpFrame* interp_frame(const FrameRef& ref);
  void interpreter_stack(const nlohmann::json& req);

  // dap_timeline.cpp
  void timeline_events(const nlohmann::json& req);
  void checkpoints(const nlohmann::json& req);
  void when(const nlohmann::json& req);
  nlohmann::json when_json();

  std::function<void(const nlohmann::json&)> send_;
  DapSessionOptions opts_;
  std::mutex send_mu_;
  int seq_ = 1;
  bool answered_ = false;  // the request being dispatched got its response
  std::unique_ptr<Timeline> timeline_;
  std::unique_ptr<Debugger> debugger_;
  std::unique_ptr<EventIndex> events_;
  std::string trace_dir_;
  std::atomic<Timeline*> running_{nullptr};  ///< the timeline while a resume runs
  std::atomic<pid_t> recording_{0};          ///< the `rewind record` process while it runs
  std::atomic<bool> abandoned_{false};       ///< disconnect, terminate or the client gone
  std::mutex reply_mu_;
  std::condition_variable reply_cv_;
  std::map<int64_t, nlohmann::json> replies_;  ///< responses to reverse requests, by seq
  bool client_run_in_terminal_ = false;        ///< initialize's supportsRunInTerminalRequest
  std::mutex cancel_mu_;
  std::set<int64_t> cancelled_;            ///< seqs of requests cancelled before their turn
  std::set<int64_t> interrupting_pauses_;  ///< seqs of pauses that interrupted a running op
  bool stop_on_entry_ = false, configured_ = false, ended_ = false, lines_from_1_ = true;
  /// The client gave the token (DapOptions::token) in launch or attach; without a token to
  /// check, true from the start.
  std::atomic<bool> authenticated_ = false;
  bool client_invalidated_ = false;
  /// Sources are served through the `source` request (each Source has a sourceReference):
  /// the client may be on another machine, without the files. Attach sessions do this by
  /// default; the "sourcesFromServer" argument of launch and attach chooses.
  bool serve_sources_ = false;
  int exit_code_ = -1;            ///< the recorded program's exit status (record mode)
  std::vector<FrameRef> frames_;  ///< frameId - 1 -> the frame
  /// "merged" (Python frames in stackTrace), "separate" (only in rewind/interpreterStack) or
  /// "off": the launch's "interpreterFrames".
  std::string interp_mode_ = "merged";
  std::unique_ptr<ScriptStacks> scripts_;  ///< over debugger_, made with it
  std::vector<VarRef> refs_;               ///< variablesReference - 1 -> what it names
  std::vector<DataBreakpoint> data_breakpoints_;
  std::map<std::string, WatchInfo> watchable_;  ///< dataId -> what dataBreakpointInfo found
  int next_data_id_ = 100000;                   ///< data breakpoint ids, apart from the Debugger's
  std::map<std::string, int> source_refs_;      ///< path -> sourceReference (remote sessions)
  std::vector<std::string> source_paths_;       ///< sourceReference - 1 -> path
  std::set<std::string> handed_out_;            ///< every path source_json named to the client
  std::set<pid_t> known_threads_;
  std::map<pid_t, std::string> known_processes_;  ///< recorded pid -> program, as last announced
  pid_t root_pid_ = 0;  ///< the trace's first process (its process event came with the launch)
  std::map<std::string, nlohmann::json> known_modules_;  ///< id -> Module, as last announced
  std::optional<StopInfo> last_stop_;
  std::vector<uint64_t> user_checkpoints_;  ///< checkpoint id - 1 -> event it was taken after
};

}  // namespace rwd
