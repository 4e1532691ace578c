// Reading CPython objects out of a stopped interpreter (3.11-3.14): strings, ints of any
// size, floats, bytes, containers; and the co_linetable decoder. Layouts: python_layout.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/interp/interp_frame.h"
#include "engine/interp/python/python_layout.h"

namespace rwd {

/// The type name of the object at `obj` (its ob_type->tp_name). Throws InterpReadError.
std::string python_type_name(InterpMemory& m, uint64_t obj);
/// The name of the type object at `type` (its tp_name: "ValueError", "helper.Invalid").
/// Throws InterpReadError.
std::string python_type_object_name(InterpMemory& m, uint64_t type);

/// The text of the str object at `obj`, as UTF-8 (at most `max_chars` code points, then
/// "..."). Throws InterpReadError when it is not a readable str.
std::string python_str(InterpMemory& m, const PythonLayout& l, uint64_t obj,
                       size_t max_chars = 4096);

/// The value of the object at `obj` as Python's repr() would show it, for the kinds a
/// debugger shows inline: None, bool, int (any size), float, str, bytes; lists and tuples
/// with their first items and their length; dicts with their length; other objects as
/// "<TYPE object at 0x...>". `type` receives the type name. Throws InterpReadError.
std::string python_repr(InterpMemory& m, const PythonLayout& l, uint64_t obj, std::string& type,
                        int depth = 0);

/// One entry of a 3.11+ co_linetable: `length` code units from `start` (2-byte units from
/// the start of the bytecode) on source line `line` (0: no line).
struct PythonLineEntry {
  uint64_t start = 0;
  uint64_t length = 0;
  int line = 0;
};

/// Every entry of a 3.11+ co_linetable (Objects/locations.md), in bytecode order; a corrupt
/// table ends the list early.
std::vector<PythonLineEntry> python_line_entries(const std::vector<uint8_t>& linetable,
                                                 int firstlineno);

/// The source line of the instruction at `lasti` (in 2-byte code units from the start of the
/// bytecode) from a 3.11+ co_linetable (Objects/locations.md: entries of 1-8 code units,
/// line deltas from `firstlineno`). 0 when the instruction has no line.
int python_line(const std::vector<uint8_t>& linetable, int firstlineno, uint64_t lasti);

}  // namespace rwd
