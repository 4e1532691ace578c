// One handler per DAP request (lldb-dap's Handler/ folder is the model): each reads its typed
// arguments (protocol/dap_arguments.h), serves the request over the shared DapContext, and
// answers through its DapRequest. The handlers live in files by subject: session.cpp
// (initialize, launch, attach, configurationDone, disconnect, cancel), breakpoints.cpp,
// inspect.cpp (threads, stacks, variables, evaluate), execution.cpp (continue, steps, pause,
// restart, seek), program.cpp (modules, sources, memory, disassembly), timeline.cpp
// (rewind/*) and interp.cpp (rewind/interpreterStack).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_context.h"
#include "adapter/dap/protocol/dap_arguments.h"

namespace rwd {

/// The request being served: its message, and its answer.
class DapRequest {
 public:
  DapRequest(const nlohmann::json& message, DapChannel& out) : message(message), out_(out) {}
  /// The whole request message (DAP Request), checked to have a seq and a command.
  const nlohmann::json& message;
  /// The request's command ("next", "stepBack"...).
  std::string command() const { return string_member(message, "command"); }
  /// Sends the success response with `body` (left out when empty).
  void respond(nlohmann::json body = nlohmann::json::object()) {
    out_.respond(message, std::move(body));
    answered_ = true;
  }
  /// Whether respond() was called.
  bool answered() const { return answered_; }

 private:
  DapChannel& out_;
  bool answered_ = false;
};

/// A DAP request rewind knows: its command, how it is served (empty: not supported, answered
/// with an error), and the capability that announces it to clients (DAP specification,
/// "Capabilities"; nullptr: the request needs none). initialize's capabilities are built from
/// the one table of these, so that one is announced exactly when its request is served.
struct RequestHandler {
  using Serve = std::function<void(DapContext&, DapRequest&)>;
  const char* command;
  Serve serve;
  const char* capability;
};

/// Every request rewind knows, in one table (request_table.cpp).
const std::vector<RequestHandler>& request_handlers();

/// initialize's response body: the capabilities (DAP Capabilities), built from
/// request_handlers() and the features of the requests served.
nlohmann::json capabilities();

/// A handler taking the typed arguments `Args`: they are read from the message's
/// "arguments" (an empty object when absent) before `fn` runs.
template <class Args>
RequestHandler::Serve typed(void (*fn)(DapContext&, const Args&, DapRequest&)) {
  return [fn](DapContext& c, DapRequest& r) { fn(c, arguments(r.message).get<Args>(), r); };
}

/// The handlers: each serves the DAP request (or rewind's own, docs/dap.md) that
/// request_table.cpp names it for, as the DAP specification's "Requests" defines it; errors
/// are thrown (RequestError and the engine's Error) and answered by DapSession.
namespace handlers {
// session.cpp
void initialize(DapContext& c, const dap::InitializeArguments& a, DapRequest& r);
void launch(DapContext& c, const dap::LaunchArguments& a, DapRequest& r);
void attach(DapContext& c, const dap::AttachArguments& a, DapRequest& r);
void configuration_done(DapContext& c, const dap::NoArguments& a, DapRequest& r);
/// disconnect and terminate.
void disconnect(DapContext& c, const dap::NoArguments& a, DapRequest& r);
void cancel(DapContext& c, const dap::NoArguments& a, DapRequest& r);
// breakpoints.cpp
void set_breakpoints(DapContext& c, const dap::SetBreakpointsArguments& a, DapRequest& r);
void set_function_breakpoints(DapContext& c, const dap::SetFunctionBreakpointsArguments& a,
                              DapRequest& r);
void set_instruction_breakpoints(DapContext& c, const dap::SetInstructionBreakpointsArguments& a,
                                 DapRequest& r);
void set_exception_breakpoints(DapContext& c, const dap::SetExceptionBreakpointsArguments& a,
                               DapRequest& r);
void data_breakpoint_info(DapContext& c, const dap::DataBreakpointInfoArguments& a, DapRequest& r);
void set_data_breakpoints(DapContext& c, const dap::SetDataBreakpointsArguments& a, DapRequest& r);
void breakpoint_locations(DapContext& c, const dap::BreakpointLocationsArguments& a, DapRequest& r);
// inspect.cpp
void threads(DapContext& c, const dap::NoArguments& a, DapRequest& r);
void stack_trace(DapContext& c, const dap::StackTraceArguments& a, DapRequest& r);
void scopes(DapContext& c, const dap::ScopesArguments& a, DapRequest& r);
void variables(DapContext& c, const dap::VariablesArguments& a, DapRequest& r);
void evaluate(DapContext& c, const dap::EvaluateArguments& a, DapRequest& r);
void completions(DapContext& c, const dap::CompletionsArguments& a, DapRequest& r);
void exception_info(DapContext& c, const dap::NoArguments& a, DapRequest& r);
// set_value.cpp
void set_variable(DapContext& c, const dap::SetVariableArguments& a, DapRequest& r);
void set_expression(DapContext& c, const dap::SetExpressionArguments& a, DapRequest& r);
// execution.cpp
/// continue and reverseContinue.
void resume(DapContext& c, const dap::ContinueArguments& a, DapRequest& r);
/// next, stepIn, stepOut, stepBack, rewind/stepInBack and rewind/stepOutBack.
void step(DapContext& c, const dap::StepArguments& a, DapRequest& r);
void pause(DapContext& c, const dap::NoArguments& a, DapRequest& r);
void restart(DapContext& c, const dap::NoArguments& a, DapRequest& r);
void seek(DapContext& c, const dap::SeekArguments& a, DapRequest& r);
// history.cpp
/// rewind/history: the changes of a value over the recording (a second replay).
void history(DapContext& c, const dap::HistoryArguments& a, DapRequest& r);
/// rewind/seek with `change`: to change `index` of the last rewind/history answer.
void seek_change(DapContext& c, int64_t index, DapRequest& r);
/// rewind/nextChange and rewind/previousChange: to the next (last) write that changed a value.
void step_to_change(DapContext& c, const dap::EvaluateArguments& a, DapRequest& r);
// hit_queries.cpp
/// rewind/calls: every call of a function over the recording (a second replay).
void calls(DapContext& c, const dap::CallsArguments& a, DapRequest& r);
/// rewind/logAll: a logpoint's message at every hit over the recording.
void log_all(DapContext& c, const dap::LogAllArguments& a, DapRequest& r);
/// rewind/seek with `call` or `logHit`: to that result of the last calls or logAll answer.
void seek_hit(DapContext& c, const dap::SeekArguments& a, DapRequest& r);
// program.cpp
void modules(DapContext& c, const dap::ModulesArguments& a, DapRequest& r);
void loaded_sources(DapContext& c, const dap::NoArguments& a, DapRequest& r);
void source(DapContext& c, const dap::SourceArguments& a, DapRequest& r);
void read_memory(DapContext& c, const dap::ReadMemoryArguments& a, DapRequest& r);
// disassemble.cpp
void disassemble(DapContext& c, const dap::DisassembleArguments& a, DapRequest& r);
// timeline.cpp
void timeline_events(DapContext& c, const dap::TimelineArguments& a, DapRequest& r);
void checkpoints(DapContext& c, const dap::CheckpointsArguments& a, DapRequest& r);
void when(DapContext& c, const dap::NoArguments& a, DapRequest& r);
// interp.cpp
void interpreter_stack(DapContext& c, const dap::ThreadArguments& a, DapRequest& r);
/// rewind/interpreterCode {frameId} (a Python or R frame): the byte code it runs,
/// disassembled: {language, function, source, format, instructions [{offset, opcode,
/// operands, line}], constants, currentOffset, note (a function the AST evaluator runs),
/// text (the listing as a document)}. An error for a native frame, or code that cannot be
/// read here.
void interpreter_code(DapContext& c, const dap::ScopesArguments& a, DapRequest& r);
}  // namespace handlers

}  // namespace rwd
