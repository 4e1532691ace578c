// Breakpoints of every DAP kind: source lines, functions, instructions, signals (exception
// filters) and data (hardware watchpoints).
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <sstream>

#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_session.h"
#include "engine/arch/signal_names.h"

namespace rwd {

using nlohmann::json;

namespace {

/// A breakpoint's condition and hit condition from a DAP breakpoint object.
BreakpointSpec conditions(const json& b) {
  BreakpointSpec s;
  s.condition = optional_arg<std::string>(b, "condition", "");
  s.hit_condition = optional_arg<std::string>(b, "hitCondition", "");
  return s;
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

}  // namespace

json DapSession::breakpoint_json(const Breakpoint& bp) {
  json j = {{"id", bp.id}, {"verified", !bp.sites.empty()}};
  if (bp.line) j["line"] = line_out(bp.line);
  std::string file = bp.file.empty() ? bp.spec.file : bp.file;
  if (!file.empty()) j["source"] = source_json(file);
  if (!bp.message.empty()) j["message"] = bp.message;
  if (bp.spec.address) j["instructionReference"] = hex(bp.spec.address);
  return j;
}

void DapSession::respond_breakpoints(const json& req, const std::vector<Breakpoint>& bps) {
  json out = json::array();
  for (const Breakpoint& bp : bps) out.push_back(breakpoint_json(bp));
  respond(req, {{"breakpoints", out}});
}

void DapSession::set_breakpoints(const json& req) {
  Debugger& d = debugger();
  const json& args = arguments(req);
  json source = required<json>(args, "source");
  std::string path = optional_arg<std::string>(source, "path", "");
  if (path.empty()) throw RequestError("setBreakpoints needs source.path");
  std::vector<BreakpointSpec> specs;
  for (const json& b : optional_arg<json>(args, "breakpoints", json::array())) {
    BreakpointSpec s = conditions(b);
    s.line = line_in(required<int64_t>(b, "line"));
    s.log_message = optional_arg<std::string>(b, "logMessage", "");
    specs.push_back(s);
  }
  respond_breakpoints(req, d.set_source_breakpoints(path, specs));
}

void DapSession::set_function_breakpoints(const json& req) {
  Debugger& d = debugger();
  std::vector<BreakpointSpec> specs;
  for (const json& b : required<json>(arguments(req), "breakpoints")) {
    BreakpointSpec s = conditions(b);
    s.function = required<std::string>(b, "name");
    specs.push_back(s);
  }
  respond_breakpoints(req, d.set_function_breakpoints(specs));
}

void DapSession::set_instruction_breakpoints(const json& req) {
  Debugger& d = debugger();
  std::vector<BreakpointSpec> specs;
  for (const json& b : required<json>(arguments(req), "breakpoints")) {
    BreakpointSpec s = conditions(b);
    s.address = parse_address(required<std::string>(b, "instructionReference")) +
                uint64_t(optional_arg<int64_t>(b, "offset", 0));
    specs.push_back(s);
  }
  respond_breakpoints(req, d.set_instruction_breakpoints(specs));
}

void DapSession::set_exception_breakpoints(const json& req) {
  Debugger& d = debugger();
  const json& args = arguments(req);
  SignalStops stops;
  stops.fatal = false;
  json out = json::array();
  auto add = [&](const std::string& filter, const std::string& condition) {
    json b = {{"verified", true}};
    if (filter == "all") {
      stops.all = true;
    } else if (filter == "fatal") {
      stops.fatal = true;
    } else if (filter == "signals") {
      std::istringstream in(condition);
      std::string name;
      std::string bad;
      while (in >> name) {
        for (char& c : name)
          if (c == ',') c = ' ';
        std::istringstream parts(name);
        std::string part;
        while (parts >> part) {
          int sig = signal_number(part);
          if (sig)
            stops.signals.push_back(sig);
          else
            bad += (bad.empty() ? "" : ", ") + part;
        }
      }
      if (!bad.empty()) {
        b["verified"] = false;
        b["message"] = "not a signal: " + bad;
      } else if (condition.empty()) {
        b["verified"] = false;
        b["message"] = "name the signals in the condition, e.g. \"SIGUSR1 SIGALRM\"";
      }
    } else {
      b["verified"] = false;
      b["message"] = "unknown exception filter \"" + filter + "\"";
    }
    out.push_back(b);
  };
  for (const json& f : optional_arg<json>(args, "filters", json::array()))
    add(f.get<std::string>(), "");
  for (const json& o : optional_arg<json>(args, "filterOptions", json::array()))
    add(required<std::string>(o, "filterId"), optional_arg<std::string>(o, "condition", ""));
  d.set_signal_stops(stops);
  respond(req, {{"breakpoints", out}});
}

void DapSession::data_breakpoint_info(const json& req) {
  Debugger& d = debugger();
  const json& args = arguments(req);
  std::string name = required<std::string>(args, "name");
  json body = {{"dataId", nullptr},
               {"accessTypes", json::array({"write", "readWrite"})},
               {"canPersist", false}};
  try {
    WatchInfo w;
    if (optional_arg<bool>(args, "asAddress", false)) {
      w.addr = parse_address(name);
      w.len = int(optional_arg<int64_t>(args, "bytes", 8));
      check_watch_range(w.addr, w.len, name);
      w.type = std::to_string(w.len) + " bytes";
    } else if (int ref = optional_arg<int>(args, "variablesReference", 0)) {
      if (ref < 1 || size_t(ref) > refs_.size())
        throw StaleReferenceError("unknown variablesReference " + std::to_string(ref));
      const VarRef& r = refs_[size_t(ref) - 1];
      if (r.kind == VarRef::Registers) throw Error("a register cannot be watched");
      if (r.kind == VarRef::Children) {
        // A member or element has no expression of its own: find it by name.
        bool found = false;
        for (const NamedValue& c : children(r.value, d.target(r.tid)))
          if (c.name == name) {
            w = watch_info(c.value, "\"" + name + "\"");
            found = true;
            break;
          }
        if (!found) throw Error("no member \"" + name + "\"");
      } else {
        w = d.watchable(r.tid, r.frame, name);
      }
    } else {
      auto [tid, frame] = frame_arg(req, false);
      w = d.watchable(tid, frame, name);
    }
    std::string id = make_data_id(w, name);
    body["dataId"] = id;
    body["description"] = name + " (" + w.type + " at " + hex(w.addr) + ")";
    watchable_[id] = w;
  } catch (const RequestError&) {
    throw;
  } catch (const Error& e) {
    body["description"] = e.what();
  }
  respond(req, body);
}

void DapSession::set_data_breakpoints(const json& req) {
  Debugger& d = debugger();
  for (const DataBreakpoint& b : data_breakpoints_) d.unwatch(b.watch, b.kind);
  data_breakpoints_.clear();
  json out = json::array();
  for (const json& b : required<json>(arguments(req), "breakpoints")) {
    DataId id = parse_data_id(required<std::string>(b, "dataId"));
    std::string access = optional_arg<std::string>(b, "accessType", "write");
    DataBreakpoint bp;
    bp.id = next_data_id_++;
    bp.name = id.name;
    auto known = watchable_.find(b["dataId"].get<std::string>());
    if (known != watchable_.end()) {
      bp.watch = known->second;
    } else {
      bp.watch.addr = id.addr;
      bp.watch.len = id.len;
    }
    json j = {{"id", bp.id}, {"verified", false}};
    if (access == "read") {
      j["message"] =
          "x86 debug registers cannot watch reads alone: use \"readWrite\" (stops at reads and "
          "writes)";
    } else if (access != "write" && access != "readWrite") {
      j["message"] = "unknown accessType \"" + access + "\"";
    } else if (b.contains("condition") || b.contains("hitCondition")) {
      j["message"] = "data breakpoints with conditions are not supported";
    } else {
      bp.kind = access == "write" ? WatchKind::Write : WatchKind::ReadWrite;
      try {
        d.watch(bp.watch, bp.kind);
        j["verified"] = true;
        data_breakpoints_.push_back(bp);
      } catch (const Error& e) {
        j["message"] = e.what();
      }
    }
    out.push_back(j);
  }
  respond(req, {{"breakpoints", out}});
}

std::string DapSession::data_breakpoint_description(const StopInfo& stop, std::vector<int>& ids) {
  for (const DataBreakpoint& b : data_breakpoints_) {
    if (stop.addr < b.watch.addr || stop.addr >= b.watch.addr + uint64_t(b.watch.len)) continue;
    ids.push_back(b.id);
    Target& t = debugger_->target(stop.tid);
    auto show = [&](const std::vector<uint8_t>& bytes) -> std::string {
      if (b.watch.value_type) return format_value(Value::of(b.watch.value_type, bytes), t);
      uint64_t v = 0;
      for (size_t i = 0; i < bytes.size() && i < 8; ++i) v |= uint64_t(bytes[i]) << (8 * i);
      return hex(v);
    };
    std::string head = b.kind == WatchKind::Write
                           ? "Hardware watchpoint " + std::to_string(b.id)
                           : "Hardware access (read/write) watchpoint " + std::to_string(b.id);
    if (stop.old_value == stop.new_value) return head + ": " + b.name + ": " + show(stop.new_value);
    return head + ": " + b.name + ": " + show(stop.old_value) + " → " + show(stop.new_value);
  }
  return "Hardware watchpoint at " + hex(stop.addr);
}

uint32_t DapSession::line_in(int64_t line) const {
  if (line < 0 || line >= INT32_MAX)
    throw RequestError("line " + std::to_string(line) + " is out of range");
  return uint32_t(line + (lines_from_1_ ? 0 : 1));
}

void DapSession::breakpoint_locations(const json& req) {
  Debugger& d = debugger();
  const json& args = arguments(req);
  std::string path = optional_arg<std::string>(required<json>(args, "source"), "path", "");
  uint32_t first = line_in(required<int64_t>(args, "line"));
  uint32_t last = line_in(optional_arg<int64_t>(args, "endLine", line_out(first)));
  json out = json::array();
  std::set<uint32_t> lines;
  for (const auto& m : d.modules().modules()) {
    DwarfIndex* dw = m->dwarf();
    if (!dw || path.empty() || last < first) continue;
    std::set<uint32_t> here = dw->lines_with_code(path, first, last);
    lines.insert(here.begin(), here.end());
  }
  for (uint32_t l : lines) out.push_back({{"line", line_out(l)}});
  respond(req, {{"breakpoints", out}});
}

}  // namespace rwd
