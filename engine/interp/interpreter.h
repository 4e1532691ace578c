// The language runtime a replayed program may be (CPython, GNU R), as rewind sees it from
// outside: found among the process's modules, its script's stack read from memory, and how
// that stack goes into the native one (DESIGN.md "Interpreter frames"; py-spy's per-version
// traits and its --native merge are the model). Each runtime implements this in its folder:
// interp/python, interp/r.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "engine/interp/interp_code.h"
#include "engine/interp/interp_frame.h"
#include "engine/symbols/call_stack.h"
#include "engine/symbols/module_list.h"

namespace rwd {

class PythonReader;
class RReader;

/// One frame of a mixed stack: the native frame at index `native` of the native stack, or,
/// when `interp` >= 0, the script frame at that index of the script's stack, shown at that
/// native frame's place.
struct MixedFrame {
  size_t native = 0;
  int interp = -1;
};

/// A runtime found in a stopped process.
class Interpreter {
 public:
  virtual ~Interpreter() = default;
  /// "CPython 3.11.2", "GNU R".
  virtual std::string name() const = 0;
  /// The script's frames on task `tid` (its id as the program sees it: in a replay, the
  /// recorded tid), innermost first, as deep as `depth` says; empty when the task runs
  /// none. A frame that cannot be read ends the stack with its `error` set.
  virtual std::vector<InterpFrame> stack(InterpMemory& mem, pid_t tid,
                                         StackDepth depth = {}) const = 0;
  /// The mixed stack: `native` (innermost first) with the interpreter's own frames that run
  /// `script` replaced by the script's frames, the native frames the program stopped in and
  /// those of other modules kept. `script` is stack()'s result for the same task.
  virtual std::vector<MixedFrame> mix(const std::vector<StackFrame>& native,
                                      const std::vector<InterpFrame>& script) const = 0;
  /// The byte code `frame` (one of stack()'s) runs, disassembled (interp_code.h). Throws
  /// InterpReadError when it cannot be read here, Error where the runtime has no code view.
  virtual InterpCode code(InterpMemory& mem, const InterpFrame& frame) const {
    (void)mem;
    throw Error("the byte code view is not available for " + name() + " frames (" + frame.function +
                ")");
  }
  /// The CPython reader, for stepping by the script's lines (PythonStepper); nullptr for a
  /// runtime whose lines cannot be stepped yet (R).
  virtual const PythonReader* python() const { return nullptr; }
  /// The GNU R reader, for stepping by the script's lines (RStepper); nullptr for others.
  virtual const RReader* r() const { return nullptr; }
};

/// The runtime among `modules` (CPython first, then GNU R), or nullptr when the process is
/// none of them or has not loaded it yet. Throws InterpReadError when it is there but not
/// initialized far enough to be read (look again later), Error when it is a version rewind
/// cannot read (the message names it).
std::unique_ptr<Interpreter> find_interpreter(const ModuleList& modules, InterpMemory& mem);

/// CPython among `modules` (python/python_interpreter.cpp), or nullptr; throws as
/// find_interpreter.
std::unique_ptr<Interpreter> find_python_interpreter(const ModuleList& modules, InterpMemory& mem);
/// GNU R among `modules` (r/r_interpreter.cpp), or nullptr; throws as find_interpreter.
std::unique_ptr<Interpreter> find_r_interpreter(const ModuleList& modules, InterpMemory& mem);

}  // namespace rwd
