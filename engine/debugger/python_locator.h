// The CPython interpreter of a replay, found once its code is mapped and initialized: what
// Python breakpoints and exception stops read the interpreter's state with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "engine/interp/python/python_frames.h"
#include "engine/symbols/module_list.h"
#include "engine/timeline/timeline.h"

namespace rwd {

/// Finds the interpreter in the debugger's modules, looking again each time they change until
/// it is found; then keeps it.
class PythonLocator {
 public:
  /// `modules`: the debugger's modules at the current point (refreshed by it after moves).
  PythonLocator(Timeline& timeline, ModuleList& modules) : tl_(timeline), modules_(modules) {}

  /// The interpreter, nullptr while none is found (not loaded or not initialized yet, or a
  /// version rewind cannot read).
  const PythonReader* reader();
  /// The address of function `name` (its first instruction) among the modules, 0 when none
  /// has it.
  uint64_t function(const char* name) const { return modules_.function_range(name).first; }
  /// The addresses that function `name`'s code calls directly where no symbol names a
  /// function (direct_calls, function_parts.h): a stripped interpreter's internal functions,
  /// found from an exported caller. Empty when there are none or the code cannot be read.
  std::vector<uint64_t> unnamed_callees(const char* name) const;
  /// The module whose mappings hold runtime address `addr`, nullptr when none.
  const Module* module_at(uint64_t addr) const { return modules_.module_at(addr); }
  /// Whether `rip` is in the eval loop (_PyEval_EvalFrameDefault and its split-off parts:
  /// PythonReader::in_eval_loop); false before reader().
  bool in_eval_loop(uint64_t rip) const { return reader_ && reader_->in_eval_loop(rip); }

 private:
  Timeline& tl_;
  ModuleList& modules_;
  std::optional<PythonReader> reader_;
  size_t modules_seen_ = SIZE_MAX;
};

}  // namespace rwd
