// A frame of an interpreted language (Python, R) read out of a stopped interpreter's memory,
// and the checked memory reads the readers share (engine/interp, DESIGN.md "Interpreter
// frames").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/symbols/module_list.h"
#include "engine/symbols/page_cache.h"
#include "engine/symbols/target.h"

namespace rwd {

/// One local variable of an interpreter frame, already formatted.
struct InterpVariable {
  std::string name;
  std::string value;      ///< "42", "'héllo'", "[list of 3]", "<Foo at 0x7f...>"
  std::string type;       ///< the interpreter's type name: "int", "str", "numeric"...
  bool argument = false;  ///< a parameter of the function
};

/// One frame of the script's stack, innermost first in a stack.
struct InterpFrame {
  std::string language;  ///< "python" or "r"
  std::string function;  ///< qualified name: "Klass.method", "<module>", "pkg::f"
  std::string file;      ///< the script's path as the interpreter knows it ("" if none)
  int line = 0;          ///< 1-based line, 0 when unknown
  std::vector<InterpVariable> locals;
  uint64_t address = 0;  ///< the frame's address in the interpreter (an identity)
  /// Python: the 8-byte word of the frame that the interpreter writes at the start of each
  /// bytecode instruction it runs in this frame (its instruction pointer), which a write
  /// watchpoint can follow; 0 when there is none (R).
  uint64_t step_word = 0;
  /// Python 3.11: the frame that entered the eval loop from C (`is_entry`); the frames of one
  /// native _PyEval_EvalFrameDefault call end with it. Used to merge with the native stack.
  bool entry = false;
  std::string error;  ///< set when the frame could not be read ("frame unavailable: ...")
};

/// A read of the interpreter's memory failed: a pointer led to unmapped memory or a value
/// was out of range (the process may be stopped in the middle of an update).
class InterpReadError : public Error {
 public:
  using Error::Error;
};

/// Runtime address of the data symbol `name` (an interpreter's exported global such as
/// _PyRuntime or R_GlobalContext) in any of `modules`, or 0 when none defines it.
uint64_t data_symbol_address(const ModuleList& modules, const char* name);
/// Runtime address of the function symbol `name` (Rf_begincontext...) in any of `modules`,
/// or 0 when none defines it.
uint64_t function_symbol_address(const ModuleList& modules, const char* name);

/// How much of a script stack to read: the innermost `frames` frames, with the locals of the
/// innermost `with_locals` of them (a frame's locals are most of what reading it costs: each
/// value is an object of its own, often on a page of its own).
struct StackDepth {
  size_t frames = SIZE_MAX;
  size_t with_locals = SIZE_MAX;
};

/// Checked reads of a stopped process's memory for the interpreter readers.
class InterpMemory {
 public:
  /// Reads `target`, which must stay stopped while this lives (pages are kept: a reader
  /// makes hundreds of small reads, each a round trip to a timeline's engine thread).
  explicit InterpMemory(Target& target) : pages_(target) {}
  /// `len` bytes at `addr`; throws InterpReadError when they are not all readable.
  std::vector<uint8_t> bytes(uint64_t addr, size_t len);
  uint64_t u64(uint64_t addr);
  uint32_t u32(uint64_t addr);
  int32_t i32(uint64_t addr) { return int32_t(u32(addr)); }
  int64_t i64(uint64_t addr) { return int64_t(u64(addr)); }
  uint8_t u8(uint64_t addr);
  double f64(uint64_t addr);
  Target& target() { return pages_.target(); }

 private:
  PageCache pages_;
};

}  // namespace rwd
