// Which members or elements of a value changed between two images of its bytes: what a
// history of a struct or an array reports for each write (gdb's watchpoints on a struct
// print the whole old and new value; a history row names the part that changed).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/symbols/target.h"
#include "engine/symbols/types.h"
#include "engine/symbols/value.h"

namespace rwd {

/// One scalar member or element (or a whole union, whose members overlap) of a value.
struct ValuePart {
  /// As C names it after the value's own expression: ".balance", "[3]", ".pos.x", "[1][2]"
  /// (anonymous members and base classes add no component); "" for the value itself.
  std::string path;
  TypePtr type;
  uint64_t offset = 0;                    ///< bytes from the start of the value
  uint32_t bit_size = 0, bit_offset = 0;  ///< a bitfield's bits (Member's meaning); 0: none
};

/// The parts of a value of `type` whose bits differ between `before` and `after` (images
/// of the value's bytes; a shorter one counts as differing), in address order. At most
/// `limit` are returned; `more` (when given) is set to how many others differ.
std::vector<ValuePart> changed_parts(const TypePtr& type, const std::vector<uint8_t>& before,
                                     const std::vector<uint8_t>& after, size_t limit,
                                     size_t* more = nullptr);

/// A change of a value, as a history row shows it.
struct ChangeText {
  /// The changed parts' paths, joined by ", " ("[3]", ".x, .y", ".a, .b, … (+4 more)"); ""
  /// when the value is a scalar (or a union: it is shown whole).
  std::string member;
  /// The old and new values of those parts, formatted as the Variables view formats them
  /// and joined in the same order (the whole values when `member` is "").
  std::string old_value, new_value;
};

/// What changed, named after `expression`: the expression itself for a scalar
/// (`member` ""), the part for one ("acct.balance", "grid[1][2]"), else the expression
/// with its parts ("p (.x, .y)").
std::string changed_name(const std::string& expression, const std::string& member);

/// Describes the change of a value of `type` from bytes `before` to `after`: a scalar shows
/// whole; a struct or an array names the parts that changed (up to 8) and shows theirs. An
/// empty image shows as "<unknown>". `t` reads what formatting follows (a char pointer's
/// string).
ChangeText describe_change(const TypePtr& type, const std::vector<uint8_t>& before,
                           const std::vector<uint8_t>& after, Target& t,
                           const FormatOptions& opt = {});

}  // namespace rwd
