// CPython code objects as a script breakpoint needs them (3.11-3.14): the file and function a
// code object belongs to, where each source line's runs of bytecode begin, and the code
// objects nested in it (the functions and classes its body defines, among its co_consts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/interp/interp_code.h"
#include "engine/interp/interp_frame.h"
#include "engine/interp/python/python_layout.h"
#include "engine/interp/python/python_objects.h"

namespace rwd {

/// One code object read out of a stopped interpreter.
struct PythonCode {
  uint64_t address = 0;  ///< the PyCodeObject's address
  std::string file;      ///< co_filename
  std::string qualname;  ///< co_qualname: "<module>", "Klass.method"
  int firstlineno = 0;   ///< co_firstlineno (a function's `def` line, or its first decorator)
  std::vector<PythonLineEntry> lines;  ///< co_linetable, decoded
  std::vector<uint64_t> nested;        ///< code objects among co_consts
};

/// Reads the code object at `code`. Throws InterpReadError when it is not a readable code
/// object.
PythonCode read_python_code(InterpMemory& mem, const PythonLayout& l, uint64_t code);

/// Runtime addresses of the instructions (2-byte code units in co_code_adaptive) where a run
/// of line `line` begins in `code`: the first unit of each sequence of line-table entries on
/// that line. A function's header (its entries on the `def` line before the body, which
/// CPython runs at each call: RESUME, cell set-up) is left out, as pdb stops on a `def` line
/// only where the def statement itself runs. Empty when the line has no code there.
std::vector<uint64_t> python_line_starts(const PythonCode& code, const PythonLayout& l, int line);

/// The smallest line >= `line` that has a run start in `code`, or 0 when none.
int python_next_line_with_code(const PythonCode& code, int line);

class PythonReader;

/// The bytecode Python frame `frame` (one of reader.stack()'s) runs, as the adaptive
/// interpreter holds it (co_code_adaptive: specialized instructions; inline caches skipped),
/// decoded with that version's opcode names (python_disassembly.cpp), offsets in bytes as
/// dis shows them, co_consts, and the instruction the frame is at. Throws InterpReadError
/// when it cannot be read here, Error for a version without an opcode table.
InterpCode python_frame_code(InterpMemory& mem, const PythonReader& reader,
                             const InterpFrame& frame);

}  // namespace rwd
