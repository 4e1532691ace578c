// A typed value read from a stopped process: its bytes (in memory, or computed), formatted
// the way gdb prints it, with children (members, elements, the pointee) fetched on demand.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/symbols/location.h"
#include "engine/symbols/target.h"
#include "engine/symbols/types.h"

namespace rwd {

/// A value of a type, at a location.
struct Value {
  TypePtr type;
  Location loc;  ///< Memory (an lvalue), Bytes, OptimizedOut or Error
  /// For bitfield members: the bits inside the bytes (0 width: not a bitfield).
  uint32_t bit_size = 0, bit_offset = 0;

  /// A value in memory at `addr`.
  static Value at(TypePtr type, uint64_t addr);
  /// A value made of `bytes` (truncated or zero-extended to the type's size).
  static Value of(TypePtr type, std::vector<uint8_t> bytes);
  /// A value that cannot be read, with gdb's wording in `why` ("<optimized out>" etc.).
  static Value unavailable(TypePtr type, Location loc);
  /// A value at an evaluated location: in memory, made of its bytes, or unavailable.
  static Value from(TypePtr type, const Location& loc);
  bool available() const {
    return loc.kind == Location::Kind::Memory || loc.kind == Location::Kind::Bytes;
  }
};

/// The value's bytes (type_size of them), read from memory when needed; nullopt when they
/// cannot be read (the message is set in `error` when given).
std::optional<std::vector<uint8_t>> value_bytes(const Value& v, Target& t,
                                                std::string* error = nullptr);
/// An integer view of a scalar (bool, char, int, enum, pointer; bitfields extracted),
/// sign-extended for signed types. nullopt for non-scalars or unreadable values.
std::optional<int64_t> value_as_int(const Value& v, Target& t);
/// A floating view (float/double/long double; integers converted). nullopt when not numeric.
std::optional<double> value_as_double(const Value& v, Target& t);

/// How much format_value prints.
struct FormatOptions {
  int depth = 3;  ///< nesting of aggregates printed inline; deeper ones as "{...}"
  size_t max_elements =
      200;  ///< array elements (and string chars) printed, as gdb's "print elements"
  /// Names a code address ("compare_ints") for function pointers; "" when unknown.
  std::function<std::string(uint64_t)> symbolize;
};

/// The value as gdb's `print` shows it: 42, 2.5, 97 'a', 0x4011b6 "text", BLUE,
/// {x = 1, y = 2}, {1, 2, 3}, <optimized out>, <error: Cannot access memory at 0x0>.
std::string format_value(const Value& v, Target& t, const FormatOptions& opt = {});

/// A child of a value: a member, a base class, an element or the pointee.
struct NamedValue {
  std::string name;  ///< "x", "[3]", "*list", or the base class's name
  Value value;
};

/// Number of children a variables view shows for `v`: members (and bases) of an aggregate,
/// elements of an array (outermost dimension), 1 for a dereferenceable pointer, else 0.
size_t child_count(const Value& v, Target& t);
/// Children [start, start+count) (lazily: only those are read).
std::vector<NamedValue> children(const Value& v, Target& t, size_t start = 0,
                                 size_t count = SIZE_MAX);

/// Member `name` of a struct/class/union value (searching base classes), nullopt if none.
std::optional<Value> member(const Value& v, const std::string& name);
/// Element `index` of an array value, or of the memory a pointer value points to.
std::optional<Value> element(const Value& v, Target& t, int64_t index);
/// The pointee of a pointer or reference value; nullopt for other types.
std::optional<Value> dereference(const Value& v, Target& t);

}  // namespace rwd
