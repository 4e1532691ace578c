// Call stacks as a debugger shows them: physical frames from the unwinder, each expanded
// into its inlined calls (innermost first, as gdb does), named from DWARF or, without debug
// info, from the ELF symbol table.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/symbols/module_list.h"
#include "engine/symbols/target.h"
#include "engine/symbols/unwinder.h"
#include "engine/symbols/value.h"

namespace rwd {

/// One frame of a call stack.
struct StackFrame {
  pid_t tid = 0;             ///< the thread this frame belongs to
  size_t physical = 0;       ///< index of the physical frame (inlined frames share one)
  uint64_t pc = 0;           ///< runtime pc: where the frame is (frame 0) or returns to
  uint64_t cfa = 0;          ///< canonical frame address of the physical frame (0: unknown)
  Module* module = nullptr;  ///< nullptr for code outside any file (JIT, vdso)
  std::string function;      ///< "main", "ns::Shape::area"; "" when nothing names the pc
  std::string file;          ///< source path; "" without line information
  uint32_t line = 0, column = 0;
  bool inlined = false;              ///< an inlined call: its code lives inside the frame below
  const FunctionInfo* fn = nullptr;  ///< the DWARF function holding the pc, if any
  DieOffset scope = 0;               ///< the DIE whose variables are in scope (subprogram/inlined)
  FrameRegisters regs;               ///< registers known in this frame
  bool return_address = false;       ///< pc is a return address (symbol lookups use pc - 1)
  /// The link-time address used for lookups (pc, or pc - 1 for a return address).
  uint64_t lookup_pc() const { return module ? module->to_link(pc - (return_address ? 1 : 0)) : 0; }
};

/// The call stack of `tid`, innermost frame first, at most `max_frames` frames.
std::vector<StackFrame> build_call_stack(Target& target, ModuleList& modules, pid_t tid,
                                         size_t max_frames = 256);

/// Formatting options that name code addresses ("compare_ints", "main+4") from `modules`'
/// symbols, for function pointers.
FormatOptions symbolizing_options(ModuleList& modules);

/// "file:line" of a runtime address, with the unit's file table; nullopt without line info.
struct SourceLine {
  std::string file;
  uint32_t line = 0, column = 0;
  bool is_stmt = false;
};
std::optional<SourceLine> source_line_at(ModuleList& modules, uint64_t runtime_addr);

}  // namespace rwd
