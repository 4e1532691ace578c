// rewind's gdb `monitor` commands (the remote protocol's qRcmd): where the replay stands in
// the recording, and the mixed native and script stack of an interpreter (Python, R) that
// gdb's own `bt` cannot show.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/timeline/timeline_types.h"

namespace rwd {
class Timeline;
class Debugger;
class ScriptStacks;
struct ValueHistory;
struct HitHistory;
}  // namespace rwd

namespace rwd::gdb {

/// The monitor commands of one gdb session over a timeline. Not thread-safe.
class MonitorCommands {
 public:
  /// Over `timeline`, a replay of the trace at `trace_dir` (history queries replay it again).
  MonitorCommands(Timeline& timeline, std::string trace_dir);
  ~MonitorCommands();
  /// Runs monitor command `cmd` for thread `tid` (gdb's selected thread) at the current stop
  /// and returns what gdb prints (lines ending in '\n'). Commands: "when" (the current event
  /// number), "stack" (the mixed stack, as py-spy --native shows it: the interpreter's own
  /// frames replaced by the script frames they run), "script-stack" (the script frames
  /// alone, with their locals), "history EXPR" (every change of an lvalue's value over the
  /// recording, numbered; value_history.h), "calls FUNC" (every call of a function with its
  /// arguments, caller and return value; hit_history.h), "goto N" (to result N of the last
  /// history or calls: the timeline moves), "help". An unknown command or a failure is told
  /// in the text.
  std::string run(const std::string& cmd, pid_t tid, uint64_t event);
  /// Where the last command moved the timeline (goto), once; nullopt when it did not.
  std::optional<StopInfo> take_moved() { return std::exchange(moved_, std::nullopt); }

 private:
  /// The engine's debugger over the timeline, made on first use and brought to the current
  /// stop (gdb moves the timeline without it).
  Debugger& debugger();
  std::string stack(pid_t tid, bool scripts_only);
  std::string history(pid_t tid, const std::string& expr);
  std::string calls(const std::string& function);
  std::string go_to(const std::string& arg);
  /// monitor script-code [N]: the byte code of script frame N (format_interp_code).
  std::string script_code(pid_t tid, const std::string& arg);

  Timeline& tl_;
  std::unique_ptr<Debugger> debugger_;
  std::unique_ptr<ScriptStacks> scripts_;
  std::string trace_dir_;
  std::unique_ptr<ValueHistory> history_;  ///< the last history's answer
  std::string history_expr_;
  std::unique_ptr<HitHistory> calls_;  ///< the last calls' answer
  bool goto_calls_ = false;            ///< goto N names a call (the last query was calls)
  std::optional<StopInfo> moved_;
};

}  // namespace rwd::gdb
