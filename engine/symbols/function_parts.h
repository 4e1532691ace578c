// Where a function's code lies when its compiler split it: GCC's hot/cold partitioning (and
// profile-guided layouts) move blocks of a function out of the range its symbol names, into
// parts that a stripped binary's dynamic symbol table does not name. Debian's CPython 3.14
// keeps most of _PyEval_EvalFrameDefault's loop in such a part: the symbol covers 1,184
// bytes, the loop an 84 KB block of its own elsewhere.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/symbols/module_list.h"
#include "engine/symbols/target.h"

namespace rwd {

/// Runtime ranges [lo, hi) of a function's code.
using CodeRanges = std::vector<std::pair<uint64_t, uint64_t>>;

/// The code of function `name` (the first module defining it, as ModuleList::function_range):
/// its symbol's range, then each unwind-table range (unwind_table_range) that a direct jump
/// from that code leads into outside it, where no other function's symbol begins (a jump to
/// another function is a tail call, not a part; a part's own symbol, where the file keeps
/// one, is named NAME.cold, NAME.part.N...). Reads the code from `target`. Empty when no
/// module defines the function; the symbol's range alone when its code cannot be read or
/// decoded. At most 16 parts. Names each part in its module (Module::name_part), so that
/// stacks show it as `name`.
CodeRanges function_parts(Target& target, const ModuleList& modules, const char* name);

/// Runtime addresses that the direct calls in the code of function `name`'s symbol (the
/// first module defining it) call, outside that code, in the order of the calls, each once.
/// How a stripped file's unnamed function is found from a named caller (Debian's CPython 3.14
/// calls its unexported _PyErr_Display only from PyErr_Display and _thread's excepthook).
/// Empty when no module defines `name` or its code cannot be read or decoded.
std::vector<uint64_t> direct_calls(Target& target, const ModuleList& modules, const char* name);

/// Whether `pc` lies in one of `ranges`.
inline bool in_ranges(const CodeRanges& ranges, uint64_t pc) {
  for (const auto& [lo, hi] : ranges)
    if (pc >= lo && pc < hi) return true;
  return false;
}

}  // namespace rwd
