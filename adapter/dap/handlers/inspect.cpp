// Looking at the stopped program: threads, stacks, scopes, variables, evaluate, the REPL's
// completions and exception info.
#include <unistd.h>

#include <algorithm>

#include "adapter/dap/handlers/dap_handlers.h"
#include "engine/arch/signal_names.h"

namespace rwd::handlers {

using nlohmann::json;

namespace {

/// DWARF register names 0-16 (System V x86-64 psABI, "DWARF Register Number Mapping").
constexpr const char* kDwarfRegisterNames[] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi",
                                               "rbp", "rsp", "r8",  "r9",  "r10", "r11",
                                               "r12", "r13", "r14", "r15", "rip"};

/// The registers of frame `frame` of `tid`: all of them for the innermost, the ones the
/// unwinder recovered (DWARF numbering) for outer frames.
json register_variables(DapContext& c, pid_t tid, size_t frame) {
  std::vector<dap::Variable> regs;
  if (frame == 0) {
    Registers values = c.timeline->registers(tid);
    for (size_t i = 0; i < kRegisterCount; ++i)
      regs.push_back({register_name(i), hex(register_value(values, i))});
  } else {
    const StackFrame& f = c.dbg->stack(tid).at(frame);
    for (int n = 0; n < FrameRegisters::kCount; ++n)
      regs.push_back(
          {kDwarfRegisterNames[n], f.regs.has(n) ? hex(f.regs.value[size_t(n)]) : "<not saved>"});
  }
  json out = regs;
  for (json& v : out) v.erase("type");  // registers are shown without a type
  return out;
}

/// A native frame as a DAP StackFrame with id `id`.
dap::StackFrame native_frame(DapContext& c, const StackFrame& f, int id) {
  std::string name = f.function.empty() ? hex(f.pc) : f.function;
  if (f.inlined) name += " [inlined]";
  dap::StackFrame out{id, name, f.line ? c.line_out(f.line) : 0,
                      f.line ? int(std::max<uint32_t>(f.column, 1)) : 0};
  out.instruction_pointer_reference = hex(f.pc);
  if (f.module) out.module_id = hex(f.module->lo());
  // A source the client cannot open (a library's, built elsewhere) is left out: the frame
  // then has only its instructionPointerReference, and VS Code shows the disassembly
  // instead of an editor with an error.
  if (!f.file.empty() &&
      (c.serve_sources || ::access(c.source_map.to_local(f.file).c_str(), R_OK) == 0))
    out.source = c.source(f.file);
  else
    out.presentation_hint = "subtle";
  return out;
}

}  // namespace

void threads(DapContext& c, const dap::NoArguments&, DapRequest& r) {
  json out = json::array();
  for (const TaskInfo& t : c.debugger().timeline().tasks())
    out.push_back(dap::Thread{t.tid, task_display_name(t)});
  r.respond({{"threads", out}});
}

void stack_trace(DapContext& c, const dap::StackTraceArguments& a, DapRequest& r) {
  Debugger& d = c.debugger();
  pid_t tid = c.thread(a.thread_id);
  const auto& stack = d.stack(tid);
  std::vector<MixedFrame> entries;
  if (c.interp_mode == "merged") entries = c.merged_stack(tid);
  if (entries.empty())
    for (size_t i = 0; i < stack.size(); ++i) entries.push_back({i, -1});
  json out = json::array();
  size_t end = a.levels ? std::min(entries.size(), a.start_frame + a.levels) : entries.size();
  for (size_t k = a.start_frame; k < end; ++k) {
    const MixedFrame& e = entries[k];
    int id = c.refs.add_frame({tid, e.native, e.interp});
    if (e.interp >= 0)
      out.push_back(c.interp_frame_json(c.interp_stack(tid)[size_t(e.interp)], id));
    else
      out.push_back(native_frame(c, stack[e.native], id));
  }
  r.respond({{"stackFrames", out}, {"totalFrames", entries.size()}});
}

void scopes(DapContext& c, const dap::ScopesArguments& a, DapRequest& r) {
  FrameRef ref = c.frame(a.frame_id);
  json out = json::array();
  auto scope = [&](const char* name, const char* hint, VarRef::Kind kind, size_t frame) {
    out.push_back(dap::Scope{name, hint, c.refs.add_variables({kind, ref.tid, frame, {}})});
  };
  if (ref.interp >= 0) {  // a Python or R frame: its locals
    scope("Locals", "locals", VarRef::InterpLocals, size_t(ref.interp));
  } else {
    scope("Locals", "locals", VarRef::Locals, ref.frame);
    scope("Arguments", "arguments", VarRef::Arguments, ref.frame);
    scope("Globals", "", VarRef::Globals, ref.frame);
    scope("Registers", "registers", VarRef::Registers, ref.frame);
  }
  r.respond({{"scopes", out}});
}

void variables(DapContext& c, const dap::VariablesArguments& a, DapRequest& r) {
  Debugger& d = c.debugger();
  VarRef ref = c.refs.variables(a.variables_reference);
  json out = json::array();
  auto in_page = [&](size_t i) { return !a.count || i < a.start + a.count; };
  if (ref.kind == VarRef::Children) {
    for (const NamedValue& v :
         children(ref.value, d.target(ref.tid), a.start, a.count ? a.count : SIZE_MAX))
      out.push_back(c.variable(v.name, v.value, ref.tid));
  } else if (ref.kind == VarRef::Registers) {
    out = register_variables(c, ref.tid, ref.frame);
  } else if (ref.kind == VarRef::InterpLocals) {
    const auto& locals = c.interp_stack(ref.tid).at(ref.frame).locals;
    for (size_t i = a.start; i < locals.size() && in_page(i); ++i)
      out.push_back(dap::Variable{locals[i].name, locals[i].value, locals[i].type});
  } else {
    FrameVariables& vars = d.variables(ref.tid);
    std::vector<Variable> list = ref.kind == VarRef::Locals      ? vars.locals(ref.frame)
                                 : ref.kind == VarRef::Arguments ? vars.arguments(ref.frame)
                                                                 : vars.unit_globals(ref.frame);
    for (size_t i = a.start; i < list.size() && in_page(i); ++i)
      out.push_back(c.variable(list[i].name, list[i].value, ref.tid));
  }
  r.respond({{"variables", out}});
}

void evaluate(DapContext& c, const dap::EvaluateArguments& a, DapRequest& r) {
  Debugger& d = c.debugger();
  FrameRef ref = c.frame(a.frame_id);
  if (const InterpFrame* f = c.interp_frame(ref)) {  // a script frame: its locals by name
    for (const InterpVariable& v : f->locals)
      if (v.name == a.expression) {
        r.respond({{"result", v.value}, {"type", v.type}, {"variablesReference", 0}});
        return;
      }
    throw RequestError("\"" + a.expression + "\" is not a local variable of " + f->function +
                       " (in a Python frame, rewind shows locals by name)");
  }
  json var = c.variable(a.expression, d.evaluate(ref.tid, ref.frame, a.expression), ref.tid);
  json body = {{"result", var["value"]}, {"variablesReference", var["variablesReference"]}};
  for (const char* k : {"type", "memoryReference", "indexedVariables", "namedVariables"})
    if (var.contains(k)) body[k] = var[k];
  r.respond(body);
}

void completions(DapContext& c, const dap::CompletionsArguments& a, DapRequest& r) {
  Debugger& d = c.debugger();
  const std::string& text = a.text;
  size_t column = a.column.value_or(text.size() + 1);
  size_t end = std::min(text.size(), column ? column - 1 : 0);
  size_t begin = end;
  while (begin > 0 && (std::isalnum(static_cast<unsigned char>(text[begin - 1])) ||
                       text[begin - 1] == '_' || text[begin - 1] == '$'))
    --begin;
  std::string prefix = text.substr(begin, end - begin);
  FrameRef f = c.frame(a.frame_id);
  std::set<std::string> names;
  FrameVariables& vars = d.variables(f.tid);
  if (f.frame < d.stack(f.tid).size()) {
    for (const Variable& v : vars.locals(f.frame)) names.insert(v.name);
    for (const Variable& v : vars.arguments(f.frame)) names.insert(v.name);
    for (const Variable& v : vars.unit_globals(f.frame)) names.insert(v.name);
  }
  for (size_t i = 0; i < kRegisterCount; ++i) names.insert(std::string("$") + register_name(i));
  json targets = json::array();
  for (const std::string& n : names)
    if (n.compare(0, prefix.size(), prefix) == 0) {
      json t = {{"label", n}, {"type", n[0] == '$' ? "property" : "variable"}};
      if (begin != end) {
        t["start"] = int(begin) + 1;  // 1-based, as columns (columnsStartAt1)
        t["length"] = int(end - begin);
      }
      targets.push_back(t);
    }
  r.respond({{"targets", targets}});
}

void exception_info(DapContext& c, const dap::NoArguments&, DapRequest& r) {
  c.debugger();
  if (const std::optional<ExceptionStop>& e = c.last_exception) {
    // DAP ExceptionInfoResponse: breakMode "unhandled" for an exception that ends its
    // thread or the program, "always" for one a filter stops at wherever it is raised.
    json details = {{"message", e->message}, {"typeName", e->type}};
    if (!e->file.empty())
      details["stackTrace"] =
          "  File \"" + e->file + "\", line " + std::to_string(e->line) + " (raised here)";
    r.respond({{"exceptionId", e->type},
               {"description", exception_description(*e)},
               {"breakMode", e->uncaught ? "unhandled" : "always"},
               {"details", details}});
    return;
  }
  const std::optional<StopInfo>& stop = c.last_stop;
  if (!stop || stop->reason != StopReason::Signal)
    throw RequestError("the program is not stopped at a signal, a Python exception or an R error");
  int sig = stop->signo;
  std::string details = stop->fatal ? "The recorded program was killed by this signal."
                                    : "The recorded program received this signal.";
  r.respond({{"exceptionId", signal_name(sig)},
             {"description", signal_description(sig) + (stop->fatal ? " (fatal)" : "")},
             {"breakMode", stop->fatal ? "unhandled" : "always"},
             {"details", {{"message", details}, {"typeName", signal_name(sig)}}}});
}

}  // namespace rwd::handlers
