// The R stack of a stopped GNU R 4.x interpreter, read from its memory with no help from it
// (docs/interpreter-frames.md §2): R_GlobalContext -> RCNTXT chain, function
// contexts named from their call, lines from srcrefs (AST, and bytecode through the constant
// pool's srcrefsIndex), locals from the closure environment.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/interp/interp_frame.h"
#include "engine/symbols/module_list.h"

namespace rwd {

/// A GNU R interpreter found in a process (libR.so or an R binary exporting its globals).
class RReader {
 public:
  /// Looks for R's exported globals (R_GlobalContext, R_NilValue, R_UnboundValue,
  /// R_InBCInterpreter, R_Srcref). nullopt when the process is not R, or R is not
  /// initialized yet.
  static std::optional<RReader> find(const ModuleList& modules, InterpMemory& mem);

  /// The R function frames, innermost first (the calls sys.calls() would list, reversed);
  /// empty before R runs code. RCNTXT's layout differs between R 4.0-4.3 and 4.4+: the one
  /// whose saved srcrefs are all valid is used. A frame that cannot be read ends the stack
  /// with its `error` set. The innermost frame has no line when R is in its bytecode
  /// interpreter there (the pc is in hidden globals, not exported).
  std::vector<InterpFrame> stack(InterpMemory& mem) const;

 private:
  struct Globals {
    uint64_t global_context = 0;                              ///< &R_GlobalContext
    uint64_t nil = 0, unbound = 0, in_bc = 0, na_string = 0;  ///< their values
    uint64_t srcref = 0;                                      ///< &R_Srcref
  };
  explicit RReader(Globals g) : g_(g) {}
  std::vector<InterpFrame> walk(InterpMemory& mem, int srcref_offset, bool& valid) const;
  Globals g_;
};

}  // namespace rwd
