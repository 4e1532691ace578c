// The variables of a frame: arguments and locals in scope at its pc (lexical blocks), the
// globals and statics of its compile unit, and lookup by name in C's scope order.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/symbols/call_stack.h"
#include "engine/symbols/value.h"

namespace rwd {

/// A named variable with its value.
struct Variable {
  std::string name;
  Value value;
  bool argument = false;
};

/// Reads variables of frames of one stopped thread. `frames` is the whole stack (the caller
/// of frame i is needed for DW_OP_entry_value).
class FrameVariables {
 public:
  FrameVariables(Target& target, ModuleList& modules, const std::vector<StackFrame>& frames)
      : target_(target), modules_(modules), frames_(frames) {}

  /// Arguments of frame `i`, in declaration order.
  std::vector<Variable> arguments(size_t i);
  /// Locals of frame `i` in scope at its pc, innermost block first (as gdb's "info locals").
  std::vector<Variable> locals(size_t i);
  /// Globals and file statics of frame `i`'s compile unit.
  std::vector<Variable> unit_globals(size_t i);
  /// `name` as C would resolve it in frame `i`: locals (innermost first), arguments, the
  /// unit's statics, then globals of every module. nullopt when nothing has that name.
  std::optional<Variable> lookup(size_t i, const std::string& name);
  /// A named type visible from frame `i` ("struct point", "color", "Circle"); nullptr when none.
  TypePtr lookup_type(size_t i, const std::string& name);
  /// The modules with DWARF in the order names are looked up from frame `i`: the frame's
  /// own module first, with the frame's compile unit (searched before the others), then
  /// every other module (no unit).
  std::vector<std::pair<Module*, std::optional<size_t>>> search_order(size_t i);
  /// The location context (registers, CFA, frame base) of frame `i`.
  LocationContext location_context(size_t i);

 private:
  Variable read_variable(size_t i, const Die& die, bool argument);
  void collect(size_t i, const Die& scope, uint64_t pc, std::vector<Variable>& args,
               std::vector<Variable>& locals, int depth);
  std::optional<uint64_t> entry_value(size_t i, int reg);

  Target& target_;
  ModuleList& modules_;
  const std::vector<StackFrame>& frames_;
};

}  // namespace rwd
