// rewind's gdb `monitor` commands (the remote protocol's qRcmd): where the replay stands in
// the recording, and the mixed native and script stack of an interpreter (Python, R) that
// gdb's own `bt` cannot show.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

namespace rwd {
class Timeline;
class Debugger;
class ScriptStacks;
}  // namespace rwd

namespace rwd::gdb {

/// The monitor commands of one gdb session over a timeline. Not thread-safe.
class MonitorCommands {
 public:
  explicit MonitorCommands(Timeline& timeline);
  ~MonitorCommands();
  /// Runs monitor command `cmd` for thread `tid` (gdb's selected thread) at the current stop
  /// and returns what gdb prints (lines ending in '\n'). Commands: "when" (the current event
  /// number), "stack" (the mixed stack, as py-spy --native shows it: the interpreter's own
  /// frames replaced by the script frames they run), "script-stack" (the script frames
  /// alone, with their locals), "help". An unknown command or a failure is told in the text.
  std::string run(const std::string& cmd, pid_t tid, uint64_t event);

 private:
  /// The engine's debugger over the timeline, made on first use and brought to the current
  /// stop (gdb moves the timeline without it).
  Debugger& debugger();
  std::string stack(pid_t tid, bool scripts_only);

  Timeline& tl_;
  std::unique_ptr<Debugger> debugger_;
  std::unique_ptr<ScriptStacks> scripts_;
};

}  // namespace rwd::gdb
