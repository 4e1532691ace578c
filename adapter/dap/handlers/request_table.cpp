#include "adapter/dap/handlers/dap_handlers.h"

namespace rwd {

using nlohmann::json;

const std::vector<RequestHandler>& request_handlers() {
  using namespace handlers;
  static const std::vector<RequestHandler> table = {
      {"initialize", typed(&initialize), nullptr},
      {"launch", typed(&launch), nullptr},
      {"attach", typed(&attach), nullptr},
      {"configurationDone", typed(&configuration_done), "supportsConfigurationDoneRequest"},
      {"disconnect", typed(&disconnect), nullptr},
      {"terminate", typed(&disconnect), "supportsTerminateRequest"},
      {"restart", typed(&restart), "supportsRestartRequest"},
      {"cancel", typed(&cancel), "supportsCancelRequest"},
      {"setBreakpoints", typed(&set_breakpoints), nullptr},
      {"setFunctionBreakpoints", typed(&set_function_breakpoints), "supportsFunctionBreakpoints"},
      {"setInstructionBreakpoints", typed(&set_instruction_breakpoints),
       "supportsInstructionBreakpoints"},
      {"setExceptionBreakpoints", typed(&set_exception_breakpoints), nullptr},
      {"dataBreakpointInfo", typed(&data_breakpoint_info), "supportsDataBreakpoints"},
      {"setDataBreakpoints", typed(&set_data_breakpoints), "supportsDataBreakpoints"},
      {"breakpointLocations", typed(&breakpoint_locations), "supportsBreakpointLocationsRequest"},
      {"threads", typed(&threads), nullptr},
      {"stackTrace", typed(&stack_trace), nullptr},
      {"scopes", typed(&scopes), nullptr},
      {"variables", typed(&variables), nullptr},
      {"evaluate", typed(&evaluate), nullptr},
      {"setVariable", typed(&set_variable), "supportsSetVariable"},
      {"setExpression", typed(&set_expression), "supportsSetExpression"},
      {"completions", typed(&completions), "supportsCompletionsRequest"},
      {"exceptionInfo", typed(&exception_info), "supportsExceptionInfoRequest"},
      {"continue", typed(&resume), nullptr},
      {"reverseContinue", typed(&resume), "supportsStepBack"},
      {"next", typed(&step), nullptr},
      {"stepIn", typed(&step), nullptr},
      {"stepOut", typed(&step), nullptr},
      {"stepBack", typed(&step), "supportsStepBack"},
      {"rewind/stepInBack", typed(&step), nullptr},
      {"rewind/stepOutBack", typed(&step), nullptr},
      {"pause", typed(&pause), nullptr},
      {"modules", typed(&modules), "supportsModulesRequest"},
      {"loadedSources", typed(&loaded_sources), "supportsLoadedSourcesRequest"},
      {"source", typed(&source), nullptr},
      {"readMemory", typed(&read_memory), "supportsReadMemoryRequest"},
      {"disassemble", typed(&disassemble), "supportsDisassembleRequest"},
      {"rewind/timeline", typed(&timeline_events), nullptr},
      {"rewind/seek", typed(&seek), nullptr},
      {"rewind/checkpoints", typed(&checkpoints), nullptr},
      {"rewind/when", typed(&when), nullptr},
      {"rewind/history", typed(&history), nullptr},
      {"rewind/nextChange", typed(&step_to_change), nullptr},
      {"rewind/previousChange", typed(&step_to_change), nullptr},
      {"rewind/calls", typed(&calls), nullptr},
      {"rewind/logAll", typed(&log_all), nullptr},
      {"rewind/interpreterStack", typed(&interpreter_stack), nullptr},
      {"rewind/interpreterCode", typed(&interpreter_code), nullptr},
      // Requests of the specification rewind does not serve: announced as unsupported.
      {"restartFrame", {}, "supportsRestartFrame"},
      {"gotoTargets", {}, "supportsGotoTargetsRequest"},
      {"goto", {}, "supportsGotoTargetsRequest"},
      {"stepInTargets", {}, "supportsStepInTargetsRequest"},
      {"terminateThreads", {}, "supportsTerminateThreadsRequest"},
      {"writeMemory", {}, "supportsWriteMemoryRequest"},
  };
  return table;
}

json capabilities() {
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
        {"conditionDescription", "Signal names or numbers, e.g. \"SIGUSR1 SIGALRM\""}},
       {{"filter", "python-uncaught"},
        {"label", "Python: uncaught exceptions"},
        {"description",
         "Stop where a Python exception that ends the program or a thread unhandled was raised"},
        {"default", true}},
       {{"filter", "python-raised"},
        {"label", "Python: raised exceptions"},
        {"description",
         "Stop where your Python code raises an exception, caught or not (not in the standard "
         "library or installed packages)"},
        {"default", false},
        {"supportsCondition", true},
        {"conditionDescription", "Exception type names, e.g. \"ValueError KeyError\""}},
       {{"filter", "r-error"},
        {"label", "R: errors"},
        {"description",
         "Stop where R signals an error (stop(), or an error in a builtin), caught by tryCatch "
         "or not"},
        {"default", false}}});
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
               {"supportsSingleThreadExecutionRequests", true}};
  // One capability per request: true exactly when the request is served.
  for (const auto& r : request_handlers())
    if (r.capability && !(caps.contains(r.capability) && caps[r.capability] == true))
      caps[r.capability] = bool(r.serve);
  return caps;
}

}  // namespace rwd
