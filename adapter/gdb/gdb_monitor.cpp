#include "adapter/gdb/gdb_monitor.h"

#include "engine/debugger/debugger.h"
#include "engine/debugger/script_stacks.h"
#include "engine/debugger/value_history.h"
#include "engine/errors.h"

namespace rwd::gdb {

namespace {

constexpr const char* kHelp =
    "rewind monitor commands:\n"
    "  monitor when          the current event number of the recording\n"
    "  monitor stack         the stack with Python or R frames in place of the interpreter's\n"
    "  monitor script-stack  the Python or R frames alone, with their locals\n"
    "  monitor py-bt         the same for a Python program (named as gdb's python-gdb.py has it)\n"
    "  monitor r-bt          the same for an R program\n"
    "  monitor history EXPR  every change of EXPR's value over the recording (frame 0 of the\n"
    "                        selected thread names it; it is followed at its address)\n"
    "  monitor goto N        to change N of the last history (then: maint flush register-cache)\n";

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
           std::to_string(c.tid) + "  " + c.old_value + " -> " + c.new_value + "  in " +
           (c.function.empty() ? hex(c.pc) : c.function) +
           (c.file.empty() ? "" : " at " + c.file + ":" + std::to_string(c.line)) + "\n";
  }
  history_ = std::move(h);
  history_expr_ = expr;
  return out + "(monitor goto N goes to change N)\n";
}

std::string MonitorCommands::go_to(const std::string& arg) {
  if (!history_) return "rewind: no history yet: monitor history EXPR first\n";
  size_t used = 0;
  unsigned long n = 0;
  try {
    n = std::stoul(arg, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != arg.size() || n >= history_->changes.size())
    return "rewind: usage: monitor goto N, N from 0 to " +
           std::to_string(history_->changes.size()) + " (exclusive) for the history of " +
           history_expr_ + "\n";
  const ValueChange& c = history_->changes[n];
  DebugStop s = go_to_change(debugger(), *history_, c);
  moved_ = s.stop;
  return "Change " + std::to_string(n) + " of " + history_expr_ + ": " + c.old_value + " -> " +
         c.new_value + " at event " + std::to_string(c.event) + ", thread " +
         std::to_string(c.tid) +
         ".\nrewind: the replay moved; run 'maint flush register-cache' so that gdb reads "
         "the registers again\n";
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
               (cmd == "py-bt" ? "CPython 3.11-3.13" : "GNU R") +
               (in ? " but " + in->name() : std::string()) + "; monitor script-stack shows its " +
               "script frames\n";
      return stack(tid, true);
    }
    if (cmd == "help") return kHelp;
    if (cmd.rfind("history", 0) == 0 && (cmd.size() == 7 || cmd[7] == ' ')) {
      size_t b = cmd.find_first_not_of(' ', 7);
      return history(tid, b == std::string::npos ? "" : cmd.substr(b));
    }
    if (cmd.rfind("goto", 0) == 0 && (cmd.size() == 4 || cmd[4] == ' ')) {
      size_t b = cmd.find_first_not_of(' ', 4);
      return go_to(b == std::string::npos ? "" : cmd.substr(b));
    }
    return "rewind: unknown monitor command '" + cmd +
           "'; known: when, stack, script-stack, py-bt, r-bt, history, goto\n";
  } catch (const Error& e) {
    return std::string("rewind: ") + e.what() + "\n";
  }
}

}  // namespace rwd::gdb
