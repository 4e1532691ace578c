// The stacks of the script a replayed interpreter runs (Python, R), beside the native ones:
// which runtime the program is (found again when its modules change), each task's script
// frames at the current stop, and the mixed stack (native frames with the interpreter's own
// replaced by the script's), for every front end alike (DESIGN.md "Interpreter frames").
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/interp/interpreter.h"

namespace rwd {

class Debugger;

/// Script stacks over a Debugger. Reads happen at the debugger's current stop; call
/// new_stop() whenever it moves. Not thread-safe.
class ScriptStacks {
 public:
  explicit ScriptStacks(Debugger& debugger) : debugger_(debugger) {}

  /// The runtime the program is, or nullptr when it is none (or has not loaded or
  /// initialized it yet: looked for again once its modules change). Needs a stopped task
  /// `tid` to read memory through.
  const Interpreter* interpreter(pid_t tid);
  /// The script frames of task `tid` at the current stop, innermost first (empty without an
  /// interpreter).
  const std::vector<InterpFrame>& stack(pid_t tid);
  /// The mixed stack of task `tid` (Interpreter::mix); empty without script frames.
  std::vector<MixedFrame> mixed(pid_t tid);
  /// The byte code script frame `index` of task `tid` runs (Interpreter::code). Throws
  /// Error when there is no such frame or its code cannot be read.
  InterpCode code(pid_t tid, size_t index);
  /// The stop moved: script stacks are read again.
  void new_stop() { stacks_.clear(); }
  /// A message for the user about the runtime (a CPython version rewind cannot read), once.
  std::optional<std::string> take_warning() { return std::exchange(warning_, std::nullopt); }

 private:
  /// interpreter(), reading through `mem` (a stopped task's memory).
  const Interpreter* interpreter(InterpMemory& mem);
  Debugger& debugger_;
  std::unique_ptr<Interpreter> interpreter_;
  size_t modules_seen_ = SIZE_MAX;  ///< module count when interpreter_ was last looked for
  std::map<pid_t, std::vector<InterpFrame>> stacks_;  ///< this stop's, by task
  std::optional<std::string> warning_;
};

}  // namespace rwd
