// What the DAP request handlers share (lldb-dap's DAP object is the model): the session's
// options, what the client said it supports, the trace being debugged, the references
// handed out, and the few steps several handlers take (reporting a stop, running a resume so
// that pause can interrupt it, naming sources, frames and variables).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "adapter/dap/dap_channel.h"
#include "adapter/dap/dap_references.h"
#include "adapter/dap/event_index.h"
#include "adapter/dap/protocol/dap_types.h"
#include "adapter/dap/recorded_run.h"
#include "adapter/dap/source_map.h"
#include "engine/debugger/debugger.h"
#include "engine/debugger/hit_history.h"
#include "engine/debugger/script_stacks.h"
#include "engine/debugger/value_history.h"

namespace rwd {

/// How a session is served.
struct DapSessionOptions {
  /// When non-empty, launch and attach must carry `"token": token` (a TCP server: `rewind
  /// dap --listen`); a wrong or missing token is refused and the session ends.
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
  /// When non-empty, every message read and written is appended to this file, one line each
  /// ("--> " from the client, "<-- " to it, after the milliseconds since the session began):
  /// for an editor's session (`rewind dap --log FILE`), never for a TCP server, whose
  /// clients' tokens would be written there.
  std::string log_file;
};

/// What the client told initialize it supports (DAP InitializeRequestArguments).
struct ClientFeatures {
  bool lines_from_1 = true;        ///< linesStartAt1
  bool invalidated_event = false;  ///< supportsInvalidatedEvent
  bool run_in_terminal = false;    ///< supportsRunInTerminalRequest
  bool progress = false;           ///< supportsProgressReporting
};

/// The state of one DAP session that request handlers read and change, and their shared
/// steps. Used from the handling thread; the atomics also from the connection's reading
/// thread (pause, disconnect).
class DapContext {
 public:
  DapContext(DapChannel& out, DapSessionOptions opts) : out(out), opts(std::move(opts)) {}

  DapChannel& out;
  const DapSessionOptions opts;
  ClientFeatures client;

  // The trace being debugged (after launch or attach).
  std::unique_ptr<Timeline> timeline;
  std::unique_ptr<Debugger> dbg;          ///< over timeline; debugger() checks it is there
  std::unique_ptr<ScriptStacks> scripts;  ///< over dbg, made with it
  std::string trace_dir;
  /// The trace's events by number (rewind/timeline, seek messages), read on first use.
  EventIndex& event_index();
  int exit_code = -1;  ///< the recorded program's exit status (-1: not known)
  /// Record & Debug: the recording this session made (its output, its program file).
  std::optional<RecordedRun> recorded;
  pid_t root_pid = 0;  ///< the trace's first process (its process event came with the launch)

  // Session settings from launch or attach.
  bool stop_on_entry = false;
  bool configured = false;  ///< configurationDone came
  /// Sources are served through the `source` request (each Source has a sourceReference):
  /// the client may be on another machine, without the files.
  bool serve_sources = false;
  /// "merged" (Python frames in stackTrace), "separate" (only in rewind/interpreterStack) or
  /// "off": the launch's "interpreterFrames".
  std::string interp_mode = "merged";
  /// Where the trace's sources are here (launch's "sourceMap" and "substitutePath").
  SourceMap source_map;

  // Life cycle, read by the session.
  bool ended = false;  ///< the session is over (disconnect, terminate, a refused token)
  /// The client gave the right token (DapSessionOptions::token); without a token to check,
  /// not needed. Read by the connection's reading thread.
  std::atomic<bool> authenticated = false;

  // Set and read across threads: what pause and disconnect interrupt.
  std::atomic<Timeline*> running_timeline{nullptr};  ///< the timeline while a resume runs
  std::atomic<pid_t> recording{0};                   ///< the `rewind record` process while it runs
  std::mutex pause_mu;
  std::set<int64_t> interrupting_pauses;  ///< seqs of pauses that interrupted a running op
  std::atomic<HistoryQuery*> running_query{nullptr};  ///< a rewind/history while it runs
  std::atomic<HitQuery*> running_hit_query{nullptr};  ///< a rewind/calls or logAll while it runs
  std::atomic<int64_t> running_query_seq{-1};         ///< the running query's request seq (cancel)

  // References handed to the client.
  StopReferences refs;
  SourceReferences sources;
  DataBreakpoints data_breakpoints;
  std::vector<uint64_t> user_checkpoints;  ///< checkpoint id - 1 -> event it was taken after
  std::optional<StopInfo> last_stop;
  uint64_t stop_count = 0;  ///< stops reported so far: which stop the references belong to
  std::optional<ExceptionStop> last_exception;  ///< the last stop's Python exception or R error
  /// The last rewind/history answer and what it was asked (a page of the same query is
  /// served from it; rewind/seek's `change` indexes its changes).
  std::optional<ValueHistory> history;
  HistoryRequest history_request;
  uint64_t history_stop = 0;  ///< stop_count when it was made (its lvalue was named there)
  int history_interp = -1;    ///< the script frame it was asked in (-1: a native frame)
  /// The last rewind/calls and rewind/logAll answers, and what each was asked (pages;
  /// rewind/seek's `call` and `logHit`).
  std::optional<HitHistory> calls, log_hits;
  HitRequest calls_request, log_request;

  /// The debugger. Throws RequestError before launch or attach.
  Debugger& debugger();
  /// A line of rewind's (from 1) in the client's numbering.
  int line_out(uint32_t line) const { return int(line) - (client.lines_from_1 ? 0 : 1); }
  /// A client's line number as rewind's (from 1). Throws RequestError when it is out of
  /// range (negative, or past 2^31): never truncated to another line.
  uint32_t line_in(int64_t line) const;
  /// `path` (as the debug information names it) as a DAP Source, with its path here
  /// (source_map), noted as named to the client.
  dap::Source source(const std::string& path);
  /// The thread a request names (the stopped thread without one). Throws RequestError when
  /// it is not live at this point.
  pid_t thread(std::optional<pid_t> id);
  /// The frame a frameId names (the stopped thread's innermost without one). Throws
  /// StaleReferenceError for an id from before the program last moved.
  FrameRef frame(std::optional<int> id);
  /// A value as a DAP Variable, with a variablesReference for its children.
  dap::Variable variable(const std::string& name, const Value& v, pid_t tid);
  /// A breakpoint as a DAP Breakpoint.
  dap::Breakpoint breakpoint(const Breakpoint& bp);
  /// A module as a DAP Module.
  static dap::Module module(const Module& m);
  /// Where the program stands: rewind/when's body and rewind/seek's.
  nlohmann::json when();

  // dap_stops.cpp
  /// Runs `op` (a resume or a step) so that pause and disconnect can interrupt it. A failure
  /// is told in an output event; when the replay cannot go on, a terminated event follows
  /// and AnsweredError is thrown.
  DebugStop running(const std::function<DebugStop()>& op);
  /// Reports a stop: forgets the old references, tells the threads, processes, modules and
  /// breakpoints that changed, then sends the stopped event. `step_reason` is the reason
  /// for a stop at no breakpoint ("step", "pause", "entry", "goto"). After a move
  /// backwards the event's description starts with "◀ reverse · " (VS Code shows no other
  /// sign of the direction: vscode#77323).
  void stopped(const DebugStop& d, const std::string& step_reason = "step",
               Direction dir = Direction::Forward);

  // dap_interp.cpp: Python and R frames (engine/interp) in stackTrace, scopes, evaluate.
  /// The Python or R frames of task `tid` at this stop; empty when the program is not a
  /// supported CPython or GNU R, or with "interpreterFrames": "off".
  const std::vector<InterpFrame>& interp_stack(pid_t tid);
  /// stackTrace's frames in "merged" mode (Interpreter::mix): the interpreter's own native
  /// frames replaced by the script frames they run; empty without script frames.
  std::vector<MixedFrame> merged_stack(pid_t tid);
  /// The innermost frame stackTrace shows for `tid` when it is a readable Python or R frame
  /// (merged mode), else nullptr: DAP steps then go by the script's lines.
  const InterpFrame* script_on_top(pid_t tid);
  /// An interpreter frame as a DAP StackFrame with id `id`.
  dap::StackFrame interp_frame_json(const InterpFrame& f, int id);
  /// The interpreter frame a FrameRef names, or nullptr for a native one.
  const InterpFrame* interp_frame(const FrameRef& ref);

 private:
  void announce_changes();
  std::string data_breakpoint_description(const StopInfo& stop, std::vector<int>& ids);

  std::set<pid_t> known_threads_;
  std::map<pid_t, std::string> known_processes_;         ///< recorded pid -> program, as announced
  std::map<std::string, nlohmann::json> known_modules_;  ///< id -> Module, as announced
  std::unique_ptr<EventIndex> events_;                   ///< event_index(), made on first use
};

/// How a stop at a script's exception `e` is told ("ValueError: bad 3"; "error: too big: 3"
/// for R; with where an uncaught one was raised when the stop is at its report): a stopped
/// event's description and exceptionInfo's.
std::string exception_description(const ExceptionStop& e);

}  // namespace rwd
