#include "adapter/gdb/gdb_monitor.h"

#include "engine/debugger/debugger.h"
#include "engine/debugger/script_stacks.h"
#include "engine/errors.h"

namespace rwd::gdb {

namespace {

constexpr const char* kHelp =
    "rewind monitor commands:\n"
    "  monitor when          the current event number of the recording\n"
    "  monitor stack         the stack with Python or R frames in place of the interpreter's\n"
    "  monitor script-stack  the Python or R frames alone, with their locals\n"
    "  monitor py-bt         the same for a Python program (named as gdb's python-gdb.py has it)\n"
    "  monitor r-bt          the same for an R program\n";

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

MonitorCommands::MonitorCommands(Timeline& timeline) : tl_(timeline) {}

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
    return "rewind: unknown monitor command '" + cmd +
           "'; known: when, stack, script-stack, py-bt, r-bt\n";
  } catch (const Error& e) {
    return std::string("rewind: ") + e.what() + "\n";
  }
}

}  // namespace rwd::gdb
