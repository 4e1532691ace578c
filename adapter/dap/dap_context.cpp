#include "adapter/dap/dap_context.h"

#include <unistd.h>

#include <climits>

#include "adapter/dap/dap_args.h"

namespace rwd {

using nlohmann::json;

Debugger& DapContext::debugger() {
  if (!dbg)
    throw RequestError("no trace is being debugged yet: send \"launch\" or \"attach\" first");
  return *dbg;
}

EventIndex& DapContext::event_index() {
  // A session opens one trace (launch and attach refuse a second).
  if (!events_) events_ = std::make_unique<EventIndex>(trace_dir);
  return *events_;
}

uint32_t DapContext::line_in(int64_t line) const {
  if (line < 0 || line >= INT32_MAX)
    throw RequestError("line " + std::to_string(line) + " is out of range");
  return uint32_t(line + (client.lines_from_1 ? 0 : 1));
}

dap::Source DapContext::source(const std::string& path) {
  std::string here = source_map.to_local(path);
  return {here.substr(here.find_last_of('/') + 1), here, sources.name(here, serve_sources)};
}

pid_t DapContext::thread(std::optional<pid_t> id) {
  if (!id) return timeline->current().tid;
  for (const TaskInfo& t : timeline->tasks())
    if (t.tid == *id) return *id;
  throw RequestError("there is no thread " + std::to_string(*id) +
                     " at this point of the recording (see the threads request)");
}

FrameRef DapContext::frame(std::optional<int> id) {
  debugger();  // nothing to name a frame in before a launch or attach
  if (!id) return {timeline->current().tid, 0, -1};
  return refs.frame(*id);
}

dap::Variable DapContext::variable(const std::string& name, const Value& v, pid_t tid) {
  Target& target = dbg->target(tid);
  dap::Variable out{name, format_value(v, target, symbolizing_options(dbg->modules())),
                    v.type ? type_name(*v.type) : ""};
  size_t n = child_count(v, target);
  out.variables_reference = n ? refs.add_variables({VarRef::Children, tid, 0, v}) : 0;
  const Type* s = strip(v.type.get());
  if (n && s && s->kind == TypeKind::Array) out.indexed_variables = n;
  if (n && s && s->kind != TypeKind::Array) out.named_variables = n;
  if (v.loc.kind == Location::Kind::Memory) out.memory_reference = hex(v.loc.addr);
  return out;
}

dap::Breakpoint DapContext::breakpoint(const Breakpoint& bp) {
  // Native breakpoints are armed at code sites; Python ones at bytecode addresses.
  dap::Breakpoint out{bp.id, !bp.sites.empty() || !bp.addrs.empty()};
  if (bp.line) out.line = line_out(bp.line);
  std::string file = bp.file.empty() ? bp.spec.file : bp.file;
  if (!file.empty()) out.source = source(file);
  out.message = bp.message;
  if (bp.spec.address) out.instruction_reference = hex(bp.spec.address);
  return out;
}

dap::Module DapContext::module(const Module& m) {
  dap::Module out{hex(m.lo()), m.path().substr(m.path().find_last_of('/') + 1), m.path(),
                  hex(m.lo()) + "-" + hex(m.hi())};
  if (m.has_debug_info()) {
    out.symbol_status = "Symbols loaded.";
    out.symbol_file_path = m.debug_file();
  } else {
    out.symbol_status =
        m.has_symbols() ? "Symbol table only (no debug information)." : "No symbols.";
  }
  return out;
}

json DapContext::when() {
  StopInfo now = timeline->current();
  json j = {{"event", now.event}, {"eventCount", timeline->event_count()}, {"threadId", now.tid}};
  try {
    const auto& stack = dbg->stack(now.tid);
    if (!stack.empty()) {
      const StackFrame& f = stack.front();
      j["pc"] = hex(f.pc);
      if (!f.function.empty()) j["function"] = f.function;
      if (!f.file.empty()) {
        j["source"] = source(f.file);
        j["line"] = line_out(f.line);
      }
    }
  } catch (const Error&) {
    // Where the task stands cannot be read (it is exiting): the event number still holds.
  }
  return j;
}

}  // namespace rwd
