// Running and stopping: a resume that pause can interrupt, and the events that report a stop
// (threads, processes, modules and breakpoints that changed, then `stopped`).
#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_context.h"
#include "engine/arch/signal_names.h"
#include "engine/os/debug_registers.h"
#include "engine/symbols/value_diff.h"

namespace rwd {

using nlohmann::json;

DebugStop DapContext::running(const std::function<DebugStop()>& op) {
  running_timeline = timeline.get();
  try {
    DebugStop s = op();
    running_timeline = nullptr;
    return s;
  } catch (const Error& e) {
    running_timeline = nullptr;
    // The client waits for a stop (the request was answered before it ran): say what went
    // wrong, then stop where the replay is; a replay that failed (a divergence) cannot go
    // on, and the session ends (DAP terminated) instead of leaving the client waiting.
    out.output("important", std::string("rewind: ") + e.what() + "\n");
    try {
      DebugStop s;
      s.stop = timeline->current();
      (void)timeline->registers(s.stop.tid);  // throws once the replay has failed
      return s;
    } catch (const Error&) {
      out.event("terminated");
      throw AnsweredError(e.what());
    }
  } catch (...) {
    running_timeline = nullptr;
    throw;
  }
}

void DapContext::announce_changes() {
  // Threads that appeared or ended since the last stop.
  std::set<pid_t> now;
  std::map<pid_t, std::string> processes;  // recorded pid -> program
  for (const TaskInfo& t : timeline->tasks()) {
    now.insert(t.tid);
    processes[t.pid] = t.program;  // the same for every thread of a process
  }
  for (pid_t t : now)
    if (!known_threads_.count(t)) out.event("thread", {{"reason", "started"}, {"threadId", t}});
  for (pid_t t : known_threads_)
    if (!now.count(t)) out.event("thread", {{"reason", "exited"}, {"threadId", t}});
  known_threads_ = now;
  // Processes: the launch's process event named the first; each later one that appears gets
  // its own (DAP's "the debugger has begun debugging a new process"). DAP has no event for a
  // process that ends: the console says so, as gdb prints "[Inferior 2 (process N) exited]".
  std::string at = " at event " + std::to_string(timeline->current().event);
  for (auto& [pid, program] : processes) {
    if (known_processes_.count(pid) || pid == root_pid) continue;
    out.event("process", {{"name", program.empty() ? "process " + std::to_string(pid) : program},
                          {"systemProcessId", pid},
                          {"isLocalProcess", !serve_sources},
                          {"startMethod", "attach"},
                          {"pointerSize", 64}});
    out.output("console",
               "rewind: process " + std::to_string(pid) + " (" + program + ") is live" + at + "\n");
  }
  for (auto& [pid, program] : known_processes_)
    if (!processes.count(pid))
      out.output("console", "rewind: process " + std::to_string(pid) + " (" + program +
                                ") is not live" + at + "\n");
  known_processes_ = processes;
  // Modules mapped or unmapped.
  std::map<std::string, json> mods;
  for (const auto& m : dbg->modules().modules()) {
    dap::Module j = module(*m);
    mods[j.id] = j;
  }
  for (auto& [id, m] : mods)
    if (!known_modules_.count(id)) out.event("module", {{"reason", "new"}, {"module", m}});
  for (auto& [id, m] : known_modules_)
    if (!mods.count(id)) out.event("module", {{"reason", "removed"}, {"module", m}});
  known_modules_ = std::move(mods);
  // Breakpoints that bound (or unbound) in libraries loaded since.
  for (const Breakpoint& bp : dbg->take_rebound_breakpoints())
    out.event("breakpoint", {{"reason", "changed"}, {"breakpoint", breakpoint(bp)}});
}

std::string DapContext::data_breakpoint_description(const StopInfo& stop, std::vector<int>& ids) {
  for (const DataBreakpoint& b : data_breakpoints.set) {
    if (stop.addr < b.watch.addr || stop.addr >= b.watch.addr + uint64_t(b.watch.len)) continue;
    ids.push_back(b.id);
    Target& t = dbg->target(stop.tid);
    auto show = [&](const std::vector<uint8_t>& bytes) -> std::string {
      if (b.watch.value_type) return format_value(Value::of(b.watch.value_type, bytes), t);
      uint64_t v = 0;
      for (size_t i = 0; i < bytes.size() && i < 8; ++i) v |= uint64_t(bytes[i]) << (8 * i);
      return hex(v);
    };
    // gdb's words, without the id: a data breakpoint's id is rewind's own (100000 and up),
    // not a number the user ever saw.
    // (A struct or an array is watched in software: gdb's plain "Watchpoint" then.)
    bool wide = wide_watch(b.watch.addr, b.watch.len);
    std::string head = wide                         ? "Watchpoint"
                       : b.kind == WatchKind::Write ? "Hardware watchpoint"
                                                    : "Hardware access (read/write) watchpoint";
    if (stop.old_value == stop.new_value) return head + ": " + b.name + ": " + show(stop.new_value);
    if (b.watch.value_type) {
      // The members or elements that changed, for a struct or an array.
      ChangeText c = describe_change(b.watch.value_type, stop.old_value, stop.new_value, t);
      return head + ": " + changed_name(b.name, c.member) + ": " + c.old_value + " → " +
             c.new_value;
    }
    return head + ": " + b.name + ": " + show(stop.old_value) + " → " + show(stop.new_value);
  }
  return "Hardware watchpoint at " + hex(stop.addr);
}

std::string exception_description(const ExceptionStop& e) {
  std::string out = e.type + (e.message.empty() ? "" : ": " + e.message);
  if (e.uncaught) out += " (uncaught)";
  std::string where = e.file.empty() ? "" : e.file + ":" + std::to_string(e.line);
  if (e.at_report)
    out += " — reported here; raised " + (where.empty() ? "" : "at " + where + ", ") +
           "before where this continue began (reverse-continue goes there)";
  return out;
}

void DapContext::stopped(const DebugStop& d, const std::string& step_reason, Direction dir) {
  refs.clear();
  if (scripts) scripts->new_stop();
  last_stop = d.stop;
  ++stop_count;
  last_exception = d.exception;
  for (const std::string& line : d.log) out.output("console", line + "\n");
  announce_changes();
  json body = {{"threadId", d.stop.tid}, {"allThreadsStopped", true}};
  std::vector<int> ids = d.breakpoint_ids;
  // A script's exception (Python, R) is told as an exception, whatever stop carries it.
  switch (d.exception ? StopReason::Signal : d.stop.reason) {
    case StopReason::Signal:
      body["reason"] = "exception";
      if (d.exception) {
        body["text"] = d.exception->type;
        body["description"] = exception_description(*d.exception);
        break;
      }
      body["description"] =
          "Signal " + signal_name(d.stop.signo) + " (" + signal_description(d.stop.signo) + ")";
      body["text"] = signal_name(d.stop.signo);
      break;
    case StopReason::Breakpoint: {
      body["reason"] = "breakpoint";
      const Breakpoint* bp = ids.empty() ? nullptr : dbg->breakpoint(ids.front());
      if (bp && breakpoint_kind(bp->spec) == BreakpointKind::Function)
        body["reason"] = "function breakpoint";
      if (bp && breakpoint_kind(bp->spec) == BreakpointKind::Instruction)
        body["reason"] = "instruction breakpoint";
      if (!d.error.empty()) body["description"] = d.error;
      if (ids.empty() && step_reason != "step") body["reason"] = step_reason;
      break;
    }
    case StopReason::Watchpoint:
      body["reason"] = "data breakpoint";
      body["description"] = data_breakpoint_description(d.stop, ids);
      break;
    case StopReason::TraceStart:
      body["reason"] = step_reason;
      body["description"] = "The start of the recording";
      break;
    case StopReason::TraceEnd:
      body["reason"] = "pause";
      body["description"] = "The end of the recording (step back or reverse-continue from here)";
      break;
    case StopReason::Interrupted:
      body["reason"] = "pause";
      break;
    default:
      body["reason"] = step_reason;
      break;
  }
  if (!ids.empty()) body["hitBreakpointIds"] = ids;
  if (dir == Direction::Backward)
    body["description"] =
        "◀ reverse · " + body.value("description", body["reason"].get<std::string>());
  out.event("stopped", body);
}

}  // namespace rwd
