#include "adapter/dap/protocol/dap_arguments.h"

#include <map>

#include "adapter/dap/dap_args.h"

namespace rwd::dap {

using nlohmann::json;

namespace {

/// Member `name` of `j` when present and not null (null stands for absent, as optional_arg
/// takes it).
template <class T>
std::optional<T> maybe(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return required<T>(j, name);
}

/// Member `name` of `j` when present: a reference (threadId, frameId, a checkpoint's id)
/// that is null names nothing, and is refused rather than taken for the default.
template <class T>
std::optional<T> reference(const json& j, const char* name) {
  if (!j.contains(name)) return std::nullopt;
  return required<T>(j, name);
}

void read_conditions(const json& j, BreakpointConditions& a) {
  a.condition = optional_arg<std::string>(j, "condition", "");
  a.hit_condition = optional_arg<std::string>(j, "hitCondition", "");
  a.any = j.contains("condition") || j.contains("hitCondition");
}

void read_session(const json& j, SessionArguments& a) {
  a.has_token = j.contains("token");
  a.token = string_member(j, "token");
  a.stop_on_entry = optional_arg<bool>(j, "stopOnEntry", false);
  a.sources_from_server = maybe<bool>(j, "sourcesFromServer");
  a.interpreter_frames = optional_arg<std::string>(j, "interpreterFrames", "merged");
  a.trace = optional_arg<std::string>(j, "trace", "");
  for (const auto& [from, to] :
       optional_arg<std::map<std::string, std::string>>(j, "sourceMap", {}))
    a.source_map.emplace_back(from, to);
  for (const json& rule : optional_arg<std::vector<json>>(j, "substitutePath", {}))
    a.source_map.emplace_back(required<std::string>(rule, "from"),
                              required<std::string>(rule, "to"));
}

/// A query page's arguments (rewind/history, rewind/calls, rewind/logAll).
void read_page(const json& j, QueryPage& a) {
  a.start_event = maybe<int64_t>(j, "startEvent");
  a.end_event = maybe<int64_t>(j, "endEvent");
  a.start = optional_arg<int64_t>(j, "start", 0);
  a.count = optional_arg<int64_t>(j, "count", 100);
  a.order = optional_arg<std::string>(j, "order", "oldest");
  if (a.start < 0 || a.count < 0) throw RequestError("start and count must not be negative");
  if (a.order != "oldest" && a.order != "newest")
    throw RequestError("order is \"oldest\" or \"newest\", not \"" + a.order + "\"");
}

}  // namespace

void from_json(const json&, NoArguments&) {}

void from_json(const json& j, InitializeArguments& a) {
  a.lines_start_at_1 = optional_arg<bool>(j, "linesStartAt1", true);
  a.supports_invalidated_event = optional_arg<bool>(j, "supportsInvalidatedEvent", false);
  a.supports_run_in_terminal = optional_arg<bool>(j, "supportsRunInTerminalRequest", false);
  a.supports_progress = optional_arg<bool>(j, "supportsProgressReporting", false);
}

void from_json(const json& j, LaunchArguments& a) {
  read_session(j, a);
  a.mode = optional_arg<std::string>(j, "mode", "record");
  a.console = optional_arg<std::string>(j, "console", "internalConsole");
  a.program = j;
}

void from_json(const json& j, AttachArguments& a) {
  read_session(j, a);
}

void from_json(const json& j, SourceArgument& a) {
  a.path = optional_arg<std::string>(j, "path", "");
  a.source_reference = optional_arg<int>(j, "sourceReference", 0);
}

void from_json(const json& j, SourceBreakpoint& a) {
  read_conditions(j, a);
  a.line = required<int64_t>(j, "line");
  a.log_message = optional_arg<std::string>(j, "logMessage", "");
}

void from_json(const json& j, FunctionBreakpoint& a) {
  read_conditions(j, a);
  a.name = required<std::string>(j, "name");
}

void from_json(const json& j, InstructionBreakpoint& a) {
  read_conditions(j, a);
  a.instruction_reference = required<std::string>(j, "instructionReference");
  a.offset = optional_arg<int64_t>(j, "offset", 0);
}

void from_json(const json& j, DataBreakpointArgument& a) {
  read_conditions(j, a);
  a.data_id = required<std::string>(j, "dataId");
  a.access_type = optional_arg<std::string>(j, "accessType", "write");
}

void from_json(const json& j, ExceptionFilterOption& a) {
  a.filter_id = required<std::string>(j, "filterId");
  a.condition = optional_arg<std::string>(j, "condition", "");
}

void from_json(const json& j, SetBreakpointsArguments& a) {
  a.source = required<SourceArgument>(j, "source");
  a.breakpoints = optional_arg<std::vector<SourceBreakpoint>>(j, "breakpoints", {});
}

void from_json(const json& j, SetFunctionBreakpointsArguments& a) {
  a.breakpoints = required<std::vector<FunctionBreakpoint>>(j, "breakpoints");
}

void from_json(const json& j, SetInstructionBreakpointsArguments& a) {
  a.breakpoints = required<std::vector<InstructionBreakpoint>>(j, "breakpoints");
}

void from_json(const json& j, SetExceptionBreakpointsArguments& a) {
  a.filters = optional_arg<std::vector<std::string>>(j, "filters", {});
  a.filter_options = optional_arg<std::vector<ExceptionFilterOption>>(j, "filterOptions", {});
}

void from_json(const json& j, DataBreakpointInfoArguments& a) {
  a.name = required<std::string>(j, "name");
  a.as_address = optional_arg<bool>(j, "asAddress", false);
  a.bytes = optional_arg<int64_t>(j, "bytes", 8);
  a.variables_reference = optional_arg<int>(j, "variablesReference", 0);
  a.frame_id = reference<int>(j, "frameId");
}

void from_json(const json& j, SetDataBreakpointsArguments& a) {
  a.breakpoints = required<std::vector<DataBreakpointArgument>>(j, "breakpoints");
}

void from_json(const json& j, BreakpointLocationsArguments& a) {
  a.source = required<SourceArgument>(j, "source");
  a.line = required<int64_t>(j, "line");
  a.end_line = maybe<int64_t>(j, "endLine");
}

void from_json(const json& j, ThreadArguments& a) {
  a.thread_id = reference<pid_t>(j, "threadId");
}

void from_json(const json& j, StackTraceArguments& a) {
  from_json(j, static_cast<ThreadArguments&>(a));
  a.start_frame = optional_arg<size_t>(j, "startFrame", 0);
  a.levels = optional_arg<size_t>(j, "levels", 0);
}

void from_json(const json& j, ScopesArguments& a) {
  a.frame_id = required<int>(j, "frameId");
}

void from_json(const json& j, VariablesArguments& a) {
  a.variables_reference = required<int>(j, "variablesReference");
  a.start = optional_arg<size_t>(j, "start", 0);
  a.count = optional_arg<size_t>(j, "count", 0);
}

void from_json(const json& j, EvaluateArguments& a) {
  a.expression = required<std::string>(j, "expression");
  a.frame_id = reference<int>(j, "frameId");
}

void from_json(const json& j, SetVariableArguments& a) {
  a.variables_reference = required<int>(j, "variablesReference");
  a.name = required<std::string>(j, "name");
  a.value = required<std::string>(j, "value");
}

void from_json(const json& j, SetExpressionArguments& a) {
  a.frame_id = reference<int>(j, "frameId");
  a.expression = required<std::string>(j, "expression");
  a.value = required<std::string>(j, "value");
}

void from_json(const json& j, CompletionsArguments& a) {
  a.text = required<std::string>(j, "text");
  a.column = maybe<size_t>(j, "column");
  a.frame_id = reference<int>(j, "frameId");
}

void from_json(const json& j, ContinueArguments& a) {
  from_json(j, static_cast<ThreadArguments&>(a));
  a.single_thread = optional_arg<bool>(j, "singleThread", false);
}

void from_json(const json& j, StepArguments& a) {
  from_json(j, static_cast<ThreadArguments&>(a));
  a.granularity = optional_arg<std::string>(j, "granularity", "statement");
  a.single_thread = optional_arg<bool>(j, "singleThread", false);
}

void from_json(const json& j, ModulesArguments& a) {
  a.start_module = optional_arg<size_t>(j, "startModule", 0);
  a.module_count = optional_arg<size_t>(j, "moduleCount", 0);
}

void from_json(const json& j, SourceArguments& a) {
  a.source = optional_arg<SourceArgument>(j, "source", {});
  if (!a.source.source_reference)
    a.source.source_reference = optional_arg<int>(j, "sourceReference", 0);
}

void from_json(const json& j, ReadMemoryArguments& a) {
  a.memory_reference = required<std::string>(j, "memoryReference");
  a.offset = optional_arg<int64_t>(j, "offset", 0);
  a.count = required<size_t>(j, "count");
}

void from_json(const json& j, DisassembleArguments& a) {
  a.memory_reference = required<std::string>(j, "memoryReference");
  a.offset = optional_arg<int64_t>(j, "offset", 0);
  a.instruction_offset = optional_arg<int64_t>(j, "instructionOffset", 0);
  a.instruction_count = required<size_t>(j, "instructionCount");
  a.resolve_symbols = optional_arg<bool>(j, "resolveSymbols", true);
}

void from_json(const json& j, TimelineArguments& a) {
  a.start = maybe<uint64_t>(j, "start");
  a.count = maybe<uint64_t>(j, "count");
}

void from_json(const json& j, SeekArguments& a) {
  a.event = maybe<int64_t>(j, "event");
  a.change = maybe<int64_t>(j, "change");
  a.call = maybe<int64_t>(j, "call");
  a.log_hit = maybe<int64_t>(j, "logHit");
  if (a.event.has_value() + a.change.has_value() + a.call.has_value() + a.log_hit.has_value() != 1)
    throw RequestError("rewind/seek takes one of \"event\", \"change\", \"call\", \"logHit\"");
}

void from_json(const json& j, HistoryArguments& a) {
  a.expression = required<std::string>(j, "expression");
  a.frame_id = reference<int>(j, "frameId");
  read_page(j, a);
}

void from_json(const json& j, CallsArguments& a) {
  a.function = required<std::string>(j, "function");
  a.condition = optional_arg<std::string>(j, "condition", "");
  read_page(j, a);
}

void from_json(const json& j, LogAllArguments& a) {
  if (j.contains("source")) a.source = required<SourceArgument>(j, "source");
  a.line = optional_arg<int64_t>(j, "line", 0);
  a.function = optional_arg<std::string>(j, "function", "");
  a.log_message = required<std::string>(j, "logMessage");
  a.condition = optional_arg<std::string>(j, "condition", "");
  if (a.source.has_value() == !a.function.empty())
    throw RequestError("rewind/logAll takes \"source\" and \"line\", or \"function\"");
  if (a.source && a.line < 1) throw RequestError("rewind/logAll needs a \"line\" from 1");
  read_page(j, a);
}

void from_json(const json& j, CheckpointsArguments& a) {
  a.action = optional_arg<std::string>(j, "action", "list");
  a.id = reference<int64_t>(j, "id");
}

}  // namespace rwd::dap
