// The arguments of every DAP request rewind serves, as typed structs read from JSON (DAP
// specification, "Requests": each XxxArguments type; rewind's own requests in docs/dap.md).
// Only the members rewind uses are read. Reading throws RequestError with the member's name
// when a member is missing or of the wrong type; integers are never truncated or rounded.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rwd::dap {

/// A request without arguments rewind reads (threads, pause, configurationDone...).
struct NoArguments {};

/// DAP InitializeRequestArguments: what the client supports.
struct InitializeArguments {
  bool lines_start_at_1 = true;             ///< linesStartAt1
  bool supports_invalidated_event = false;  ///< supportsInvalidatedEvent
  bool supports_run_in_terminal = false;    ///< supportsRunInTerminalRequest
  bool supports_progress = false;           ///< supportsProgressReporting
};

/// What launch and attach share (docs/dap.md, "Launch and attach").
struct SessionArguments {
  std::string token;                          ///< a TCP server's token ("" when not given)
  bool has_token = false;                     ///< whether "token" was there at all
  bool stop_on_entry = false;                 ///< stopOnEntry
  std::optional<bool> sources_from_server;    ///< sourcesFromServer (default: attach yes)
  std::string interpreter_frames = "merged";  ///< "merged", "separate" or "off"
  std::string trace;                          ///< the trace to replay ("": the latest)
  /// Source path prefixes as built → as here: "sourceMap" ({"/build/dir": "/here/dir"},
  /// CodeLLDB's form) then "substitutePath" ([{"from": ..., "to": ...}], delve's form).
  std::vector<std::pair<std::string, std::string>> source_map;
};

/// launch: Record & Debug ("record") or replay a trace ("replay").
struct LaunchArguments : SessionArguments {
  std::string mode = "record";
  std::string console = "internalConsole";  ///< "integratedTerminal", "externalTerminal"
  /// The whole arguments object: program, args, cwd and env are read by plan_recording.
  nlohmann::json program;
};

/// attach: to a replay served by `rewind dap --listen`.
struct AttachArguments : SessionArguments {};

/// DAP Source, as a request names it.
struct SourceArgument {
  std::string path;          ///< "" when absent
  int source_reference = 0;  ///< 0 when absent
};

/// What every kind of breakpoint may carry (DAP SourceBreakpoint and its relatives).
struct BreakpointConditions {
  std::string condition;      ///< "" for none
  std::string hit_condition;  ///< hitCondition
  /// Whether "condition" or "hitCondition" was there at all (data breakpoints refuse them).
  bool any = false;
};

/// DAP SourceBreakpoint.
struct SourceBreakpoint : BreakpointConditions {
  int64_t line = 0;  ///< in the client's numbering (linesStartAt1)
  std::string log_message;
};

/// DAP FunctionBreakpoint.
struct FunctionBreakpoint : BreakpointConditions {
  std::string name;
};

/// DAP InstructionBreakpoint.
struct InstructionBreakpoint : BreakpointConditions {
  std::string instruction_reference;
  int64_t offset = 0;  ///< bytes
};

/// DAP DataBreakpoint.
struct DataBreakpointArgument : BreakpointConditions {
  std::string data_id;
  std::string access_type = "write";
};

/// DAP ExceptionFilterOptions.
struct ExceptionFilterOption {
  std::string filter_id;
  std::string condition;
};

struct SetBreakpointsArguments {
  SourceArgument source;
  std::vector<SourceBreakpoint> breakpoints;
};
struct SetFunctionBreakpointsArguments {
  std::vector<FunctionBreakpoint> breakpoints;
};
struct SetInstructionBreakpointsArguments {
  std::vector<InstructionBreakpoint> breakpoints;
};
struct SetExceptionBreakpointsArguments {
  std::vector<std::string> filters;
  std::vector<ExceptionFilterOption> filter_options;
};
struct DataBreakpointInfoArguments {
  std::string name;
  bool as_address = false;
  int64_t bytes = 8;
  int variables_reference = 0;  ///< 0: a name in frame_id's scope
  std::optional<int> frame_id;
};
struct SetDataBreakpointsArguments {
  std::vector<DataBreakpointArgument> breakpoints;
};
struct BreakpointLocationsArguments {
  SourceArgument source;
  int64_t line = 0;
  std::optional<int64_t> end_line;
};

/// A request that names a thread (absent: the thread the program stopped in).
struct ThreadArguments {
  std::optional<pid_t> thread_id;
};
struct StackTraceArguments : ThreadArguments {
  size_t start_frame = 0;
  size_t levels = 0;  ///< 0: all
};
/// A request that names a frame (absent: the stopped thread's innermost frame).
struct FrameArguments {
  std::optional<int> frame_id;
};
struct ScopesArguments {
  int frame_id = 0;
};
struct VariablesArguments {
  int variables_reference = 0;
  size_t start = 0;
  size_t count = 0;  ///< 0: all
};
struct EvaluateArguments : FrameArguments {
  std::string expression;
};
struct SetVariableArguments {
  int variables_reference = 0;
  std::string name;
  std::string value;
};
struct SetExpressionArguments : FrameArguments {
  std::string expression;
  std::string value;
};
struct CompletionsArguments : FrameArguments {
  std::string text;
  std::optional<size_t> column;  ///< from 1; absent: the end of the text
};
/// next, stepIn, stepOut, stepBack.
/// continue and reverseContinue.
struct ContinueArguments : ThreadArguments {
  bool single_thread = false;  ///< "singleThread": only this thread's breakpoints stop it
};
struct StepArguments : ThreadArguments {
  std::string granularity = "statement";  ///< "statement", "line" or "instruction"
  bool single_thread = false;  ///< "singleThread": only this thread's breakpoints end the step
};
struct ModulesArguments {
  size_t start_module = 0;
  size_t module_count = 0;  ///< 0: all
};
struct SourceArguments {
  SourceArgument source;  ///< its sourceReference wins over the top-level one
};
struct ReadMemoryArguments {
  std::string memory_reference;
  int64_t offset = 0;
  size_t count = 0;
};
struct DisassembleArguments {
  std::string memory_reference;
  int64_t offset = 0;
  int64_t instruction_offset = 0;
  size_t instruction_count = 0;
  bool resolve_symbols = true;
};
/// rewind/timeline: a page of the recorded events.
struct TimelineArguments {
  std::optional<uint64_t> start;  ///< absent: around the current event
  std::optional<uint64_t> count;
};
/// rewind/seek: go to the end of event `event`, or to change `change` of the last
/// rewind/history answer, call `call` of the last rewind/calls answer or hit `logHit` of the
/// last rewind/logAll answer (exactly one of them).
struct SeekArguments {
  std::optional<int64_t> event;
  std::optional<int64_t> change, call, log_hit;
};
/// A page of a query's answer, and the events it covers.
struct QueryPage {
  std::optional<int64_t> start_event, end_event;
  int64_t start = 0;
  int64_t count = 100;
  std::string order = "oldest";
};
/// rewind/calls: every call of `function` whose `condition` holds.
struct CallsArguments : QueryPage {
  std::string function;
  std::string condition;
};
/// rewind/logAll: logpoint `logMessage` at `source`:`line` (or at function `function`) over
/// the whole recording.
struct LogAllArguments : QueryPage {
  std::optional<SourceArgument> source;
  int64_t line = 0;
  std::string function;
  std::string log_message;
  std::string condition;
};
/// rewind/history: the changes of `expression`'s value (frame `frameId`) over the recording
/// or events [startEvent, endEvent], a page of `count` from `start`, oldest or newest first.
struct HistoryArguments : FrameArguments, QueryPage {
  std::string expression;
};
/// rewind/checkpoints: "list", "add", or "restore" checkpoint `id`.
struct CheckpointsArguments {
  std::string action = "list";
  std::optional<int64_t> id;
};

// Reading from JSON (nlohmann::json's from_json). Each throws RequestError.
void from_json(const nlohmann::json& j, NoArguments& a);
void from_json(const nlohmann::json& j, InitializeArguments& a);
void from_json(const nlohmann::json& j, LaunchArguments& a);
void from_json(const nlohmann::json& j, AttachArguments& a);
void from_json(const nlohmann::json& j, SourceArgument& a);
void from_json(const nlohmann::json& j, SourceBreakpoint& a);
void from_json(const nlohmann::json& j, FunctionBreakpoint& a);
void from_json(const nlohmann::json& j, InstructionBreakpoint& a);
void from_json(const nlohmann::json& j, DataBreakpointArgument& a);
void from_json(const nlohmann::json& j, ExceptionFilterOption& a);
void from_json(const nlohmann::json& j, SetBreakpointsArguments& a);
void from_json(const nlohmann::json& j, SetFunctionBreakpointsArguments& a);
void from_json(const nlohmann::json& j, SetInstructionBreakpointsArguments& a);
void from_json(const nlohmann::json& j, SetExceptionBreakpointsArguments& a);
void from_json(const nlohmann::json& j, DataBreakpointInfoArguments& a);
void from_json(const nlohmann::json& j, SetDataBreakpointsArguments& a);
void from_json(const nlohmann::json& j, BreakpointLocationsArguments& a);
void from_json(const nlohmann::json& j, ThreadArguments& a);
void from_json(const nlohmann::json& j, StackTraceArguments& a);
void from_json(const nlohmann::json& j, ScopesArguments& a);
void from_json(const nlohmann::json& j, VariablesArguments& a);
void from_json(const nlohmann::json& j, EvaluateArguments& a);
void from_json(const nlohmann::json& j, HistoryArguments& a);
void from_json(const nlohmann::json& j, CallsArguments& a);
void from_json(const nlohmann::json& j, LogAllArguments& a);
void from_json(const nlohmann::json& j, SetVariableArguments& a);
void from_json(const nlohmann::json& j, SetExpressionArguments& a);
void from_json(const nlohmann::json& j, CompletionsArguments& a);
void from_json(const nlohmann::json& j, ContinueArguments& a);
void from_json(const nlohmann::json& j, StepArguments& a);
void from_json(const nlohmann::json& j, ModulesArguments& a);
void from_json(const nlohmann::json& j, SourceArguments& a);
void from_json(const nlohmann::json& j, ReadMemoryArguments& a);
void from_json(const nlohmann::json& j, DisassembleArguments& a);
void from_json(const nlohmann::json& j, TimelineArguments& a);
void from_json(const nlohmann::json& j, SeekArguments& a);
void from_json(const nlohmann::json& j, CheckpointsArguments& a);

}  // namespace rwd::dap
