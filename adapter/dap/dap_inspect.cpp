// Looking at the stopped program: threads, stacks, scopes, variables, evaluate, the REPL's
// completions, exception info, and changing values in a diversion.
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_session.h"
#include "engine/arch/signal_names.h"

namespace rwd {

using nlohmann::json;

namespace {

/// DWARF register names 0-16 (System V x86-64 psABI, "DWARF Register Number Mapping").
constexpr const char* kDwarfRegisterNames[] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi",
                                               "rbp", "rsp", "r8",  "r9",  "r10", "r11",
                                               "r12", "r13", "r14", "r15", "rip"};

}  // namespace

void DapSession::threads(const json& req) {
  Debugger& d = debugger();
  json out = json::array();
  for (const TaskInfo& t : d.timeline().tasks())
    out.push_back({{"id", t.tid}, {"name", task_display_name(t)}});
  respond(req, {{"threads", out}});
}

pid_t DapSession::thread_arg(const json& req) {
  const json& args = arguments(req);
  if (!args.contains("threadId")) return timeline_->current().tid;
  pid_t tid = required<pid_t>(args, "threadId");
  for (const TaskInfo& t : timeline_->tasks())
    if (t.tid == tid) return tid;
  throw RequestError("there is no thread " + std::to_string(tid) +
                     " at this point of the recording (see the threads request)");
}

DapSession::FrameRef DapSession::frame_ref(const json& req, bool needed) {
  debugger();  // nothing to name a frame in before a launch or attach
  const json& args = arguments(req);
  if (!args.contains("frameId")) {
    if (needed) throw RequestError("missing argument \"frameId\"");
    return {timeline_->current().tid, 0, -1};
  }
  int id = required<int>(args, "frameId");
  if (id < 1 || size_t(id) > frames_.size())
    throw StaleReferenceError("unknown frameId " + std::to_string(id) +
                              " (frame ids last until the program moves)");
  return frames_[size_t(id) - 1];
}

std::pair<pid_t, size_t> DapSession::frame_arg(const json& req, bool needed) {
  FrameRef r = frame_ref(req, needed);
  return {r.tid, r.frame};
}

void DapSession::stack_trace(const json& req) {
  Debugger& d = debugger();
  pid_t tid = thread_arg(req);
  const json& args = arguments(req);
  size_t start = optional_arg<size_t>(args, "startFrame", 0);
  size_t levels = optional_arg<size_t>(args, "levels", 0);
  const auto& stack = d.stack(tid);
  std::vector<MixedFrame> entries;
  if (interp_mode_ == "merged") entries = merged_stack(tid);
  if (entries.empty())
    for (size_t i = 0; i < stack.size(); ++i) entries.push_back({i, -1});
  json out = json::array();
  size_t end = levels ? std::min(entries.size(), start + levels) : entries.size();
  for (size_t k = start; k < end; ++k) {
    const MixedFrame& e = entries[k];
    frames_.push_back({tid, e.native, e.interp});
    if (e.interp >= 0) {
      out.push_back(interp_frame_json(interp_stack(tid)[size_t(e.interp)], int(frames_.size())));
      continue;
    }
    const StackFrame& f = stack[e.native];
    std::string name = f.function.empty() ? hex(f.pc) : f.function;
    if (f.inlined) name += " [inlined]";
    json j = {{"id", int(frames_.size())},
              {"name", name},
              {"line", f.line ? line_out(f.line) : 0},
              {"column", f.line ? std::max<uint32_t>(f.column, 1) : 0},
              {"instructionPointerReference", hex(f.pc)}};
    if (f.module) j["moduleId"] = hex(f.module->lo());
    // A source the client cannot open (a library's, built elsewhere) is left out: the frame
    // then has only its instructionPointerReference, and VS Code shows the disassembly
    // instead of an editor with an error.
    if (!f.file.empty() && (serve_sources_ || ::access(f.file.c_str(), R_OK) == 0))
      j["source"] = source_json(f.file);
    else
      j["presentationHint"] = "subtle";
    out.push_back(j);
  }
  respond(req, {{"stackFrames", out}, {"totalFrames", entries.size()}});
}

int DapSession::ref_for(VarRef r) {
  refs_.push_back(std::move(r));
  return int(refs_.size());
}

void DapSession::scopes(const json& req) {
  debugger();
  FrameRef ref = frame_ref(req, true);
  auto [tid, frame, interp] = ref;
  json out = json::array();
  if (interp >= 0) {  // a Python frame: its locals
    out.push_back({{"name", "Locals"},
                   {"presentationHint", "locals"},
                   {"variablesReference", ref_for({VarRef::InterpLocals, tid, size_t(interp), {}})},
                   {"expensive", false}});
    respond(req, {{"scopes", out}});
    return;
  }
  auto scope = [&](const char* name, const char* hint, VarRef::Kind kind, bool expensive) {
    json s = {{"name", name},
              {"variablesReference", ref_for({kind, tid, frame, {}})},
              {"expensive", expensive}};
    if (hint) s["presentationHint"] = hint;
    out.push_back(s);
  };
  scope("Locals", "locals", VarRef::Locals, false);
  scope("Arguments", "arguments", VarRef::Arguments, false);
  scope("Globals", nullptr, VarRef::Globals, false);
  scope("Registers", "registers", VarRef::Registers, false);
  respond(req, {{"scopes", out}});
}

std::string DapSession::format(const Value& v, pid_t tid) {
  FormatOptions opt = symbolizing_options(debugger_->modules());
  return format_value(v, debugger_->target(tid), opt);
}

json DapSession::variable_json(const std::string& name, const Value& v, pid_t tid) {
  json j = {{"name", name}, {"value", format(v, tid)}, {"type", v.type ? type_name(*v.type) : ""}};
  size_t n = child_count(v, debugger_->target(tid));
  j["variablesReference"] = n ? ref_for({VarRef::Children, tid, 0, v}) : 0;
  const Type* s = strip(v.type.get());
  if (n && s && s->kind == TypeKind::Array) j["indexedVariables"] = n;
  if (n && s && s->kind != TypeKind::Array) j["namedVariables"] = n;
  if (v.loc.kind == Location::Kind::Memory) j["memoryReference"] = hex(v.loc.addr);
  return j;
}

json DapSession::register_variables(pid_t tid, size_t frame) {
  json out = json::array();
  if (frame == 0) {
    Registers r = timeline_->registers(tid);
    for (size_t i = 0; i < kRegisterCount; ++i)
      out.push_back({{"name", register_name(i)},
                     {"value", hex(register_value(r, i))},
                     {"variablesReference", 0}});
    return out;
  }
  const StackFrame& f = debugger_->stack(tid).at(frame);
  for (int n = 0; n < FrameRegisters::kCount; ++n)
    out.push_back({{"name", kDwarfRegisterNames[n]},
                   {"value", f.regs.has(n) ? hex(f.regs.value[size_t(n)]) : "<not saved>"},
                   {"variablesReference", 0}});
  return out;
}

void DapSession::variables(const json& req) {
  Debugger& d = debugger();
  const json& args = arguments(req);
  int id = required<int>(args, "variablesReference");
  if (id < 1 || size_t(id) > refs_.size())
    throw StaleReferenceError("unknown variablesReference " + std::to_string(id) +
                              " (references last until the program moves)");
  VarRef r = refs_[size_t(id) - 1];
  json out = json::array();
  size_t start = optional_arg<size_t>(args, "start", 0);
  size_t count = optional_arg<size_t>(args, "count", 0);
  if (r.kind == VarRef::Children) {
    for (const NamedValue& c : children(r.value, d.target(r.tid), start, count ? count : SIZE_MAX))
      out.push_back(variable_json(c.name, c.value, r.tid));
  } else if (r.kind == VarRef::Registers) {
    out = register_variables(r.tid, r.frame);
  } else if (r.kind == VarRef::InterpLocals) {
    const auto& locals = interp_stack(r.tid).at(r.frame).locals;
    for (size_t i = start; i < locals.size() && (!count || i < start + count); ++i)
      out.push_back({{"name", locals[i].name},
                     {"value", locals[i].value},
                     {"type", locals[i].type},
                     {"variablesReference", 0}});
  } else {
    FrameVariables& vars = d.variables(r.tid);
    std::vector<Variable> list = r.kind == VarRef::Locals      ? vars.locals(r.frame)
                                 : r.kind == VarRef::Arguments ? vars.arguments(r.frame)
                                                               : vars.unit_globals(r.frame);
    for (size_t i = start; i < list.size() && (!count || i < start + count); ++i)
      out.push_back(variable_json(list[i].name, list[i].value, r.tid));
  }
  respond(req, {{"variables", out}});
}

void DapSession::evaluate(const json& req) {
  Debugger& d = debugger();
  const json& args = arguments(req);
  std::string expr = required<std::string>(args, "expression");
  FrameRef ref = frame_ref(req, false);
  if (const InterpFrame* f = interp_frame(ref)) {  // a Python frame: its locals by name
    for (const InterpVariable& v : f->locals)
      if (v.name == expr) {
        respond(req, {{"result", v.value}, {"type", v.type}, {"variablesReference", 0}});
        return;
      }
    throw RequestError("\"" + expr + "\" is not a local variable of " + f->function +
                       " (in a Python frame, rewind shows locals by name)");
  }
  auto [tid, frame, interp] = ref;
  Value v = d.evaluate(tid, frame, expr);
  json var = variable_json(expr, v, tid);
  json body = {{"result", var["value"]}, {"variablesReference", var["variablesReference"]}};
  for (const char* k : {"type", "memoryReference", "indexedVariables", "namedVariables"})
    if (var.contains(k)) body[k] = var[k];
  respond(req, body);
}

json DapSession::assign(pid_t tid, size_t frame, const std::string& lvalue,
                        const std::string& value) {
  Debugger& d = debugger();
  Value target = d.evaluate(tid, frame, lvalue);
  if (target.loc.kind != Location::Kind::Memory || target.bit_size)
    throw RequestError("cannot change \"" + lvalue + "\": it is not a value in memory");
  const Type* t = strip(target.type.get());
  bool number =
      t && (t->kind == TypeKind::Base || t->kind == TypeKind::Pointer || t->kind == TypeKind::Enum);
  if (!number) throw RequestError("cannot change \"" + lvalue + "\": only numbers and pointers");
  Value v = d.evaluate(tid, frame, value);
  size_t size = type_size(*target.type);
  std::vector<uint8_t> bytes(size);
  if (t->kind == TypeKind::Base && t->encoding == Encoding::Float) {
    auto x = value_as_double(v, d.target(tid));
    if (!x) throw RequestError("\"" + value + "\" is not a number");
    if (size == 4) {
      float f = float(*x);
      std::memcpy(bytes.data(), &f, 4);
    } else if (size == 8) {
      std::memcpy(bytes.data(), &*x, 8);
    } else {
      throw RequestError("cannot change a " + std::to_string(size) + "-byte float");
    }
  } else {
    auto x = value_as_int(v, d.target(tid));
    if (!x) throw RequestError("\"" + value + "\" is not an integer");
    for (size_t i = 0; i < size && i < 8; ++i) bytes[i] = uint8_t(uint64_t(*x) >> (8 * i));
  }
  // Replay cannot change history: the write goes to a diversion, a copy of the program that
  // lives until the timeline moves (Timeline::write_memory). It refuses, with the reason,
  // where no copy can be made.
  timeline_->write_memory(tid, target.loc.addr, bytes);
  d.refresh();
  event("output", {{"category", "console"},
                   {"output", "rewind: " + lvalue +
                                  " changed in a diversion (a copy of the "
                                  "program); stepping or continuing returns to the "
                                  "recording\n"}});
  if (client_invalidated_) event("invalidated", {{"areas", json::array({"variables"})}});
  json var = variable_json(lvalue, d.evaluate(tid, frame, lvalue), tid);
  json body = {{"value", var["value"]}, {"type", var["type"]}};
  body["variablesReference"] = var["variablesReference"];
  return body;
}

void DapSession::set_variable(const json& req) {
  Debugger& d = debugger();
  const json& args = arguments(req);
  int id = required<int>(args, "variablesReference");
  std::string name = required<std::string>(args, "name");
  std::string value = required<std::string>(args, "value");
  if (id < 1 || size_t(id) > refs_.size())
    throw StaleReferenceError("unknown variablesReference " + std::to_string(id));
  VarRef r = refs_[size_t(id) - 1];
  if (r.kind == VarRef::Registers)
    throw RequestError("registers cannot be changed in a replay (memory can, in a diversion)");
  if (r.kind != VarRef::Children) {
    respond(req, assign(r.tid, r.frame, name, value));
    return;
  }
  // A member or element: address it through its location.
  for (const NamedValue& c : children(r.value, d.target(r.tid))) {
    if (c.name != name) continue;
    if (c.value.loc.kind != Location::Kind::Memory)
      throw RequestError("cannot change \"" + name + "\": it is not in memory");
    std::string lvalue = "*(" + type_name(*c.value.type) + "*)" + hex(c.value.loc.addr);
    json body = assign(r.tid, 0, lvalue, value);
    respond(req, body);
    return;
  }
  throw RequestError("no member \"" + name + "\"");
}

void DapSession::set_expression(const json& req) {
  const json& args = arguments(req);
  auto [tid, frame] = frame_arg(req, false);
  respond(req, assign(tid, frame, required<std::string>(args, "expression"),
                      required<std::string>(args, "value")));
}

void DapSession::completions(const json& req) {
  Debugger& d = debugger();
  const json& args = arguments(req);
  std::string text = required<std::string>(args, "text");
  size_t column = optional_arg<size_t>(args, "column", text.size() + 1);
  size_t end = std::min(text.size(), column ? column - 1 : 0);
  size_t begin = end;
  while (begin > 0 && (std::isalnum(static_cast<unsigned char>(text[begin - 1])) ||
                       text[begin - 1] == '_' || text[begin - 1] == '$'))
    --begin;
  std::string prefix = text.substr(begin, end - begin);
  auto [tid, frame] = frame_arg(req, false);
  std::set<std::string> names;
  FrameVariables& vars = d.variables(tid);
  if (frame < d.stack(tid).size()) {
    for (const Variable& v : vars.locals(frame)) names.insert(v.name);
    for (const Variable& v : vars.arguments(frame)) names.insert(v.name);
    for (const Variable& v : vars.unit_globals(frame)) names.insert(v.name);
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
  respond(req, {{"targets", targets}});
}

void DapSession::exception_info(const json& req) {
  debugger();
  if (!last_stop_ || last_stop_->reason != StopReason::Signal)
    throw RequestError("the program is not stopped at a signal");
  int sig = last_stop_->signo;
  std::string what = signal_description(sig);
  std::string details = last_stop_->fatal ? "The recorded program was killed by this signal."
                                          : "The recorded program received this signal.";
  respond(req, {{"exceptionId", signal_name(sig)},
                {"description", what + (last_stop_->fatal ? " (fatal)" : "")},
                {"breakMode", last_stop_->fatal ? "unhandled" : "always"},
                {"details", {{"message", details}, {"typeName", signal_name(sig)}}}});
}

}  // namespace rwd
