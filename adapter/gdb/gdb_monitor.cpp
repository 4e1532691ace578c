#include "adapter/gdb/gdb_monitor.h"

#include "engine/debugger/debugger.h"
#include "engine/debugger/hit_history.h"
#include "engine/debugger/script_stacks.h"
#include "engine/debugger/value_history.h"
#include "engine/errors.h"
#include "engine/symbols/value_diff.h"

namespace rwd::gdb {

namespace {

constexpr const char* kHelp =
    "rewind monitor commands:\n"
    "  monitor when          the current event number of the recording\n"
    "  monitor stack         the stack with Python or R frames in place of the interpreter's\n"
    "  monitor script-stack  the Python or R frames alone, with their locals\n"
    "  monitor py-bt         the same for a Python program (named as gdb's python-gdb.py has it)\n"
    "  monitor r-bt          the same for an R program\n"
    "  monitor script-code [N]  the byte code script frame N (0: the innermost) runs, with\n"
    "                        its current instruction (\"=>\")\n"
    "  monitor history EXPR  every change of EXPR's value over the recording (frame 0 of the\n"
    "                        selected thread names it; it is followed at its address)\n"
    "  monitor calls FUNC    every call of FUNC over the recording: arguments, caller, result\n"
    "  monitor goto N        to result N of the last history or calls (then: maint flush\n"
    "                        register-cache)\n";

/// "Python" or "R", as a frame's language is shown.
std::string language_name(const std::string& language) {
  return language == "python" ? "Python" : language == "r" ? "R" : language;
}

/// One script frame as a line of a backtrace: "#N  [Python] f at file.py:12".
std::string script_line(size_t n, const InterpFrame& f) {
  std::string s = "#" + std::to_string(n) + "  [" + language_name(f.language) + "] ";
  if (!f.error.empty()) return s + f.error + "\n";
  s += f.function;
  if (!f.file.empty()) s += " at " + f.file + (f.line ? ":" + std::to_string(f.line) : "");
  return s + "\n";
}

/// One native frame as gdb's backtrace shows it: "#N  0xPC in f () at file.c:12".
std::string native_line(size_t n, const StackFrame& f) {
  std::string s = "#" + std::to_string(n) + "  " + hex(f.pc) + " in " +
                  (f.function.empty() ? "??" : f.function) + " ()";
  if (!f.file.empty()) return s + " at " + f.file + ":" + std::to_string(f.line) + "\n";
  if (f.module) return s + " from " + f.module->path() + "\n";
  return s + "\n";
}

}  // namespace

MonitorCommands::MonitorCommands(Timeline& timeline, std::string trace_dir)
    : tl_(timeline), trace_dir_(std::move(trace_dir)) {}

MonitorCommands::~MonitorCommands() = default;

Debugger& MonitorCommands::debugger() {
  if (!debugger_) {
    debugger_ = std::make_unique<Debugger>(tl_);
    scripts_ = std::make_unique<ScriptStacks>(*debugger_);
  } else {
    debugger_->refresh();
  }
  scripts_->new_stop();
  return *debugger_;
}

std::string MonitorCommands::stack(pid_t tid, bool scripts_only) {
  Debugger& d = debugger();
  const std::vector<StackFrame>& native = d.stack(tid);
  const std::vector<InterpFrame>& script = scripts_->stack(tid);
  std::string out;
  if (auto warning = scripts_->take_warning()) out += "rewind: " + *warning + "\n";
  if (scripts_only) {
    if (script.empty()) return out + "No Python or R frames in this thread.\n";
    for (size_t i = 0; i < script.size(); ++i) {
      out += script_line(i, script[i]);
      for (const InterpVariable& v : script[i].locals)
        out += "        " + v.name + " = " + v.value + "\n";
    }
    return out;
  }
  std::vector<MixedFrame> mixed = script.empty() ? std::vector<MixedFrame>{} : scripts_->mixed(tid);
  if (mixed.empty())
    for (size_t i = 0; i < native.size(); ++i) mixed.push_back({i, -1});
  for (size_t i = 0; i < mixed.size(); ++i)
    out += mixed[i].interp >= 0 ? script_line(i, script[size_t(mixed[i].interp)])
                                : native_line(i, native[mixed[i].native]);
  return out;
}

std::string MonitorCommands::history(pid_t tid, const std::string& expr) {
  if (expr.empty()) return "rewind: usage: monitor history EXPR\n";
  HistoryQuery query(trace_dir_);
  HistoryRequest req;
  req.tid = tid;
  req.expression = expr;
  auto h = std::make_unique<ValueHistory>(query.run(debugger(), req));
  std::string out = "History of " + expr + " (" + h->watched.type + ", " +
                    std::to_string(h->watched.len) + " bytes at " + hex(h->watched.addr) +
                    (h->frame_function.empty() ? "" : ", a local of " + h->frame_function) +
                    "): " + std::to_string(h->changes.size()) + " changes\n";
  for (size_t i = 0; i < h->changes.size(); ++i) {
    const ValueChange& c = h->changes[i];
    out += "  " + std::to_string(i) + "  event " + std::to_string(c.event) + "  thread " +
           std::to_string(c.tid) + "  " + (c.member.empty() ? "" : c.member + ": ") + c.old_value +
           " -> " + c.new_value + "  in " + (c.function.empty() ? hex(c.pc) : c.function) +
           (c.file.empty() ? "" : " at " + c.file + ":" + std::to_string(c.line)) + "\n";
  }
  history_ = std::move(h);
  history_expr_ = expr;
  goto_calls_ = false;
  return out + "(monitor goto N goes to change N)\n";
}

std::string MonitorCommands::calls(const std::string& function) {
  if (function.empty()) return "rewind: usage: monitor calls FUNCTION\n";
  debugger();
  HitQuery query(trace_dir_);
  HitRequest req;
  req.function = function;
  // (A dotted name is a Python function's, "helper.accumulate", and in a recording of R a
  // name no library exports is an R function's, as for function breakpoints.)
  auto h = std::make_unique<HitHistory>(query.run(req));
  std::string out = "Calls of " + function + ": " + std::to_string(h->hits.size()) + "\n";
  for (size_t i = 0; i < h->hits.size(); ++i) {
    const RecordedHit& c = h->hits[i];
    std::string args;
    for (const auto& [name, value] : c.arguments)
      args += (args.empty() ? "" : ", ") + name + "=" + value;
    out += "  " + std::to_string(i) + "  event " + std::to_string(c.event) + "  thread " +
           std::to_string(c.tid) + "  " + c.function + " (" + args + ")" +
           (!c.return_known          ? ""  // (its return was not followed)
            : !c.returned            ? " (did not return)"
            : c.return_value.empty() ? ""
                                     : " -> " + c.return_value) +
           "  from " + (c.caller.empty() ? "??" : c.caller) +
           (c.caller_file.empty() ? ""
                                  : " at " + c.caller_file + ":" + std::to_string(c.caller_line)) +
           "\n";
  }
  calls_ = std::move(h);
  goto_calls_ = true;
  return out + "(monitor goto N goes to call N)\n";
}

std::string MonitorCommands::script_code(pid_t tid, const std::string& arg) {
  debugger();
  size_t frames = scripts_->stack(tid).size();
  if (!frames) return "No Python or R frames in this thread.\n";
  size_t used = 0;
  unsigned long n = 0;
  try {
    n = arg.empty() ? 0 : std::stoul(arg, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if ((!arg.empty() && used != arg.size()) || n >= frames)
    return "rewind: usage: monitor script-code [N], N a script frame from 0 to " +
           std::to_string(frames - 1) + " (monitor script-stack lists them)\n";
  return format_interp_code(scripts_->code(tid, n));
}

std::string MonitorCommands::go_to(const std::string& arg) {
  if (goto_calls_ ? !calls_ : !history_)
    return "rewind: no results yet: monitor history EXPR or monitor calls FUNC first\n";
  size_t count = goto_calls_ ? calls_->hits.size() : history_->changes.size();
  std::string of = goto_calls_ ? "the calls of " + calls_->what : "the history of " + history_expr_;
  size_t used = 0;
  unsigned long n = 0;
  try {
    n = std::stoul(arg, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != arg.size() || n >= count)
    return "rewind: usage: monitor goto N, N from 0 to " + std::to_string(count) +
           " (exclusive) for " + of + "\n";
  const char* moved =
      ".\nrewind: the replay moved; run 'maint flush register-cache' so that gdb reads the "
      "registers again\n";
  if (goto_calls_) {
    const RecordedHit& c = calls_->hits[n];
    moved_ = go_to_hit(debugger(), *calls_, c).stop;
    return "Call " + std::to_string(n) + " of " + calls_->what + " at event " +
           std::to_string(c.event) + ", thread " + std::to_string(c.tid) + moved;
  }
  const ValueChange& c = history_->changes[n];
  DebugStop s = go_to_change(debugger(), *history_, c);
  moved_ = s.stop;
  return "Change " + std::to_string(n) + " of " + changed_name(history_expr_, c.member) + ": " +
         c.old_value + " -> " + c.new_value + " at event " + std::to_string(c.event) + ", thread " +
         std::to_string(c.tid) + moved;
}

std::string MonitorCommands::run(const std::string& cmd, pid_t tid, uint64_t event) {
  try {
    if (cmd == "when")
      return "Current event: " + std::to_string(event) + " (of " +
             std::to_string(tl_.event_count()) + ")\n";
    if (cmd == "stack" || cmd == "script-stack") return stack(tid, cmd == "script-stack");
    if (cmd == "py-bt" || cmd == "r-bt") {
      debugger();
      const Interpreter* in = scripts_->interpreter(tid);
      bool python = in && in->python();
      if (!in || python != (cmd == "py-bt"))
        return std::string("rewind: this program is not ") +
               (cmd == "py-bt" ? "CPython 3.11-3.14" : "GNU R") +
               (in ? " but " + in->name() : std::string()) + "; monitor script-stack shows its " +
               "script frames\n";
      return stack(tid, true);
    }
    if (cmd == "help") return kHelp;
    if (cmd.rfind("history", 0) == 0 && (cmd.size() == 7 || cmd[7] == ' ')) {
      size_t b = cmd.find_first_not_of(' ', 7);
      return history(tid, b == std::string::npos ? "" : cmd.substr(b));
    }
    if (cmd.rfind("calls", 0) == 0 && (cmd.size() == 5 || cmd[5] == ' ')) {
      size_t b = cmd.find_first_not_of(' ', 5);
      return calls(b == std::string::npos ? "" : cmd.substr(b));
    }
    if (cmd.rfind("script-code", 0) == 0 && (cmd.size() == 11 || cmd[11] == ' ')) {
      size_t b = cmd.find_first_not_of(' ', 11);
      return script_code(tid, b == std::string::npos ? "" : cmd.substr(b));
    }
    if (cmd.rfind("goto", 0) == 0 && (cmd.size() == 4 || cmd[4] == ' ')) {
      size_t b = cmd.find_first_not_of(' ', 4);
      return go_to(b == std::string::npos ? "" : cmd.substr(b));
    }
    return "rewind: unknown monitor command '" + cmd +
           "'; known: when, stack, script-stack, py-bt, r-bt, script-code, history, calls, "
           "goto\n";
  } catch (const Error& e) {
    return std::string("rewind: ") + e.what() + "\n";
  }
}

}  // namespace rwd::gdb
