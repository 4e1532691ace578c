// Breakpoints of every DAP kind: source lines, functions, instructions, signals (exception
// filters) and data (hardware watchpoints).
#include <algorithm>
#include <sstream>

#include "adapter/dap/handlers/dap_handlers.h"
#include "engine/arch/signal_names.h"

namespace rwd::handlers {

using nlohmann::json;

namespace {

/// A breakpoint's condition and hit condition as the engine takes them.
BreakpointSpec spec_of(const dap::BreakpointConditions& b) {
  BreakpointSpec s;
  s.condition = b.condition;
  s.hit_condition = b.hit_condition;
  return s;
}

BreakpointSpec spec_of(const DapContext& c, const dap::SourceBreakpoint& b) {
  BreakpointSpec s = spec_of(b);
  s.line = c.line_in(b.line);
  s.log_message = b.log_message;
  return s;
}

BreakpointSpec spec_of(const DapContext&, const dap::FunctionBreakpoint& b) {
  BreakpointSpec s = spec_of(b);
  s.function = b.name;
  return s;
}

BreakpointSpec spec_of(const DapContext&, const dap::InstructionBreakpoint& b) {
  BreakpointSpec s = spec_of(b);
  s.address = parse_address(b.instruction_reference) + uint64_t(b.offset);
  return s;
}

/// The engine's specs for a request's breakpoints, in order.
template <class B>
std::vector<BreakpointSpec> specs_of(const DapContext& c, const std::vector<B>& breakpoints) {
  std::vector<BreakpointSpec> specs;
  for (const B& b : breakpoints) specs.push_back(spec_of(c, b));
  return specs;
}

/// Answers a breakpoint request with what became of each breakpoint.
void respond_breakpoints(DapContext& c, DapRequest& r, const std::vector<Breakpoint>& bps) {
  json out = json::array();
  for (const Breakpoint& bp : bps) out.push_back(c.breakpoint(bp));
  r.respond({{"breakpoints", out}});
}

/// What a data breakpoint's dataId encodes: "ADDRESS/BYTES/NAME".
struct DataId {
  uint64_t addr = 0;
  int len = 0;
  std::string name;
};

std::string make_data_id(const WatchInfo& w, const std::string& name) {
  return hex(w.addr) + "/" + std::to_string(w.len) + "/" + name;
}

DataId parse_data_id(const std::string& id) {
  size_t a = id.find('/'), b = a == std::string::npos ? a : id.find('/', a + 1);
  if (b == std::string::npos) throw RequestError("\"" + id + "\" is not a rewind dataId");
  DataId d;
  d.addr = parse_address(id.substr(0, a));
  d.len = std::atoi(id.substr(a + 1, b - a - 1).c_str());
  d.name = id.substr(b + 1);
  return d;
}

/// The names an exception filter's condition lists, separated by spaces or commas
/// ("SIGUSR1 SIGALRM", "10,14", "ValueError, KeyError").
std::vector<std::string> names_in(const std::string& condition) {
  std::string text = condition;
  std::replace(text.begin(), text.end(), ',', ' ');
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string part; in >> part;) out.push_back(part);
  return out;
}

/// The signals named in an exception filter's condition, and the names that are not
/// signals (", "-separated) in `bad`.
std::vector<int> signals_named(const std::string& condition, std::string& bad) {
  std::vector<int> out;
  for (const std::string& part : names_in(condition)) {
    if (int sig = signal_number(part))
      out.push_back(sig);
    else
      bad += (bad.empty() ? "" : ", ") + part;
  }
  return out;
}

/// What a data breakpoint request names: by address, a member of a value the client
/// expanded, or an expression in a frame. Throws Error (told in the body) or RequestError.
WatchInfo watch_target(DapContext& c, const dap::DataBreakpointInfoArguments& a) {
  Debugger& d = c.debugger();
  if (a.as_address) {
    WatchInfo w;
    w.addr = parse_address(a.name);
    w.len = int(a.bytes);
    check_watch_range(w.addr, w.len, a.name);
    w.type = std::to_string(w.len) + " bytes";
    return w;
  }
  if (a.variables_reference) {
    const VarRef& ref = c.refs.variables(a.variables_reference);
    if (ref.kind == VarRef::Registers) throw Error("a register cannot be watched");
    if (ref.kind != VarRef::Children) return d.watchable(ref.tid, ref.frame, a.name);
    // A member or element has no expression of its own: find it by name.
    for (const NamedValue& child : children(ref.value, d.target(ref.tid)))
      if (child.name == a.name) return watch_info(child.value, "\"" + a.name + "\"");
    throw Error("no member \"" + a.name + "\"");
  }
  FrameRef f = c.frame(a.frame_id);
  return d.watchable(f.tid, f.frame, a.name);
}

}  // namespace

void set_breakpoints(DapContext& c, const dap::SetBreakpointsArguments& a, DapRequest& r) {
  Debugger& d = c.debugger();
  if (a.source.path.empty()) throw RequestError("setBreakpoints needs source.path");
  respond_breakpoints(
      c, r,
      d.set_source_breakpoints(c.source_map.to_built(a.source.path), specs_of(c, a.breakpoints)));
}

void set_function_breakpoints(DapContext& c, const dap::SetFunctionBreakpointsArguments& a,
                              DapRequest& r) {
  Debugger& d = c.debugger();
  respond_breakpoints(c, r, d.set_function_breakpoints(specs_of(c, a.breakpoints)));
}

void set_instruction_breakpoints(DapContext& c, const dap::SetInstructionBreakpointsArguments& a,
                                 DapRequest& r) {
  Debugger& d = c.debugger();
  respond_breakpoints(c, r, d.set_instruction_breakpoints(specs_of(c, a.breakpoints)));
}

void set_exception_breakpoints(DapContext& c, const dap::SetExceptionBreakpointsArguments& a,
                               DapRequest& r) {
  Debugger& d = c.debugger();
  SignalStops stops;
  stops.fatal = false;
  PythonExceptionStops python;
  bool r_errors = false;
  json out = json::array();
  auto add = [&](const std::string& filter, const std::string& condition) {
    dap::Breakpoint b{0, true};
    if (filter == "r-error") {
      r_errors = true;
    } else if (filter == "python-uncaught") {
      python.uncaught = true;
    } else if (filter == "python-raised") {
      python.raised = true;
      for (std::string& type : names_in(condition)) python.types.push_back(std::move(type));
    } else if (filter == "all") {
      stops.all = true;
    } else if (filter == "fatal") {
      stops.fatal = true;
    } else if (filter == "signals") {
      std::string bad;
      for (int sig : signals_named(condition, bad)) stops.signals.push_back(sig);
      if (!bad.empty())
        b.message = "not a signal: " + bad;
      else if (condition.empty())
        b.message = "name the signals in the condition, e.g. \"SIGUSR1 SIGALRM\"";
    } else {
      b.message = "unknown exception filter \"" + filter + "\"";
    }
    b.verified = b.message.empty();
    json j = b;
    j.erase("id");  // a filter's breakpoint has no id
    out.push_back(j);
  };
  for (const std::string& f : a.filters) add(f, "");
  for (const dap::ExceptionFilterOption& o : a.filter_options) add(o.filter_id, o.condition);
  d.set_signal_stops(stops);
  d.set_python_exception_stops(python);
  d.set_r_error_stops(r_errors);
  r.respond({{"breakpoints", out}});
}

void data_breakpoint_info(DapContext& c, const dap::DataBreakpointInfoArguments& a, DapRequest& r) {
  c.debugger();
  // Where the debug registers are kept in software, only writes can be watched.
  json types =
      hardware_debug_registers() ? json::array({"write", "readWrite"}) : json::array({"write"});
  json body = {{"dataId", nullptr}, {"accessTypes", types}, {"canPersist", false}};
  try {
    WatchInfo w = watch_target(c, a);
    // A struct or an array is a wide watch (Timeline::add_watchpoint): writes only.
    if (wide_watch(w.addr, w.len)) body["accessTypes"] = json::array({"write"});
    std::string id = make_data_id(w, a.name);
    body["dataId"] = id;
    body["description"] = a.name + " (" + w.type + " at " + hex(w.addr) + ")";
    c.data_breakpoints.watchable[id] = w;
  } catch (const RequestError&) {
    throw;
  } catch (const Error& e) {
    body["description"] = e.what();
  }
  r.respond(body);
}

void set_data_breakpoints(DapContext& c, const dap::SetDataBreakpointsArguments& a, DapRequest& r) {
  Debugger& d = c.debugger();
  DataBreakpoints& data = c.data_breakpoints;
  for (const DataBreakpoint& b : data.set) d.unwatch(b.watch, b.kind);
  data.set.clear();
  json out = json::array();
  for (const dap::DataBreakpointArgument& b : a.breakpoints) {
    DataId id = parse_data_id(b.data_id);
    DataBreakpoint bp;
    bp.id = data.next_id++;
    bp.name = id.name;
    auto known = data.watchable.find(b.data_id);
    if (known != data.watchable.end()) {
      bp.watch = known->second;
    } else {
      bp.watch.addr = id.addr;
      bp.watch.len = id.len;
    }
    dap::Breakpoint j{bp.id, false};
    if (b.access_type == "read") {
      j.message =
          "x86 debug registers cannot watch reads alone: use \"readWrite\" (stops at reads and "
          "writes)";
    } else if (b.access_type != "write" && b.access_type != "readWrite") {
      j.message = "unknown accessType \"" + b.access_type + "\"";
    } else if (b.any) {
      j.message = "data breakpoints with conditions are not supported";
    } else {
      bp.kind = b.access_type == "write" ? WatchKind::Write : WatchKind::ReadWrite;
      try {
        d.watch(bp.watch, bp.kind);
        j.verified = true;
        data.set.push_back(bp);
      } catch (const Error& e) {
        j.message = e.what();
      }
    }
    out.push_back(j);
  }
  r.respond({{"breakpoints", out}});
}

void breakpoint_locations(DapContext& c, const dap::BreakpointLocationsArguments& a,
                          DapRequest& r) {
  Debugger& d = c.debugger();
  uint32_t first = c.line_in(a.line);
  uint32_t last = c.line_in(a.end_line.value_or(c.line_out(first)));
  std::set<uint32_t> lines;
  for (const auto& m : d.modules().modules()) {
    DwarfIndex* dw = m->dwarf();
    if (!dw || a.source.path.empty() || last < first) continue;
    std::set<uint32_t> here =
        dw->lines_with_code(c.source_map.to_built(a.source.path), first, last);
    lines.insert(here.begin(), here.end());
  }
  json out = json::array();
  for (uint32_t l : lines) out.push_back({{"line", c.line_out(l)}});
  r.respond({{"breakpoints", out}});
}

}  // namespace rwd::handlers
