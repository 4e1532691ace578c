// C and C++ types as DWARF describes them (DWARF 5 chapter 5), read into plain structures
// that values and expressions use. Types are cached per module by DIE offset; recursive
// types (a list node pointing to itself) share one object.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/symbols/dwarf_file.h"

namespace rwd {

/// What kind of type.
enum class TypeKind : uint8_t {
  Void,
  Base,  ///< int, double, char, bool... (encoding tells which)
  Pointer,
  Reference,        ///< T&
  RvalueReference,  ///< T&&
  Struct,
  Class,
  Union,
  Array,
  Enum,
  Typedef,
  Const,
  Volatile,
  Function,  ///< a function type (what a function pointer points to)
  PointerToMember,
  Unknown,
};

/// How a base type's bits are read (DW_ATE_*).
enum class Encoding : uint8_t { Signed, Unsigned, SignedChar, UnsignedChar, Float, Bool, Other };

struct Type;
using TypePtr = std::shared_ptr<Type>;

/// A data member or base class of a struct, class or union.
struct Member {
  std::string name;  ///< "" for an anonymous member; the base's type name for a base
  TypePtr type;
  uint64_t offset = 0;      ///< bytes from the start of the object
  uint32_t bit_size = 0;    ///< bitfields: width in bits (0: not a bitfield)
  uint32_t bit_offset = 0;  ///< bitfields: bits from the least significant bit of `offset`
  bool base_class = false;  ///< DW_TAG_inheritance
};

/// A type. `target` is the pointee (pointers, references), the element (arrays), the
/// aliased type (typedefs), the qualified type (const, volatile), the return type
/// (functions) or the underlying integer type (enums).
struct Type {
  TypeKind kind = TypeKind::Unknown;
  std::string name;   ///< as declared ("int", "point", "std::string"); "" when anonymous
  uint64_t size = 0;  ///< bytes (0 when unknown or incomplete)
  Encoding encoding = Encoding::Other;
  TypePtr target;
  std::vector<Member> members;
  std::vector<std::pair<std::string, int64_t>> enumerators;
  std::vector<uint64_t> dims;   ///< arrays: element counts, outermost first (0: unknown)
  std::vector<TypePtr> params;  ///< functions: parameter types
  bool declaration = false;     ///< incomplete (forward-declared) struct/class/union
};

/// The type with typedefs and const/volatile removed.
const Type* strip(const Type* t);
TypePtr strip(const TypePtr& t);
/// The type as C writes it: "int", "struct point", "char [16]", "const char *", "int (*)(int)".
std::string type_name(const Type& t);
/// True for integers, chars, bools, enums and pointers (after strip).
bool is_scalar(const Type& t);
/// Byte size after stripping typedefs/qualifiers (arrays: element size times counts).
uint64_t type_size(const Type& t);

/// Reads types from one DWARF file, caching by DIE offset.
class TypeReader {
 public:
  /// `qualify` gives a type DIE's qualified name ("" when not in a namespace or class).
  TypeReader(const DwarfFile& file, std::function<std::string(DieOffset)> qualify)
      : file_(file), qualify_(std::move(qualify)) {}
  /// Breaks the reference cycles of recursive types (a node pointing to its own type), so
  /// that they are freed; types still held elsewhere lose their links.
  ~TypeReader();
  TypeReader(const TypeReader&) = delete;
  TypeReader& operator=(const TypeReader&) = delete;
  /// The type at `die`; a Void type for nullopt (DW_AT_type absent means void).
  TypePtr read(std::optional<DieOffset> die);
  /// Basic types made up for expressions: "int", "long", "unsigned long", "double", "char",
  /// "bool".
  static TypePtr builtin(const std::string& name);

 private:
  const DwarfFile& file_;
  std::function<std::string(DieOffset)> qualify_;
  std::map<DieOffset, TypePtr> cache_;
};

}  // namespace rwd
