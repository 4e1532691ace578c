// A module's ELF symbols sorted by address, with demangled C++ names (Itanium C++ ABI,
// abi::__cxa_demangle), for address -> function and name -> address lookups.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/symbols/elf_image.h"

namespace rwd {

/// One symbol, at its link-time address.
struct Symbol {
  std::string name;       ///< as in the symbol table (mangled for C++)
  std::string demangled;  ///< "ns::f(int)" for C++, else equal to name
  uint64_t addr = 0;      ///< link-time address
  uint64_t size = 0;      ///< bytes, 0 when unknown
  bool function = false;
};

/// The demangled form of an Itanium-ABI name, or `name` itself when it is not mangled.
std::string demangle(const std::string& name);

/// "ns::f" from "ns::f(int) const": a demangled name without its parameter list.
std::string without_parameters(std::string_view demangled);

/// Symbols of one module (the file and its separate debug file together).
class SymbolTable {
 public:
  /// Adds symbols (duplicates by name and address are dropped). Call finish() after.
  void add(const std::vector<ElfSymbol>& symbols);
  /// Sorts for lookups.
  void finish();
  /// The function containing link-time address `addr` (by size; or the nearest one before
  /// it when sizes are 0), nullptr when none.
  const Symbol* function_at(uint64_t addr) const;
  /// The data object containing `addr`, nullptr when none.
  const Symbol* object_at(uint64_t addr) const;
  /// Symbols whose mangled name, demangled name, or demangled name without parameters
  /// equals `name` ("main", "_ZN2ns1fEi", "ns::f", "ns::f(int)").
  std::vector<const Symbol*> lookup(std::string_view name) const;
  /// Whether a function named `name` ("f", "ns::f", as DwarfIndex::functions_named takes
  /// it) may have code in this module, judged from the symbols alone. False only when the
  /// table is a whole one (it holds local function symbols, as .symtab does; .dynsym holds
  /// exported ones only), the name's last component is a plain identifier, and no function
  /// symbol has that identifier as a whole word of its name or demangled name ("f" in "f",
  /// "f.constprop.0", "ns::f(int) const", "int f<int>(int)"). A compiler gives every
  /// function it emits code for a symbol; what a symbol cannot show is a function renamed by
  /// an asm label, whose DWARF name appears in no symbol. One pass over the symbols.
  bool may_name_function(std::string_view name) const;
  size_t size() const { return symbols_.size(); }

 private:
  std::vector<Symbol> symbols_;   // sorted by addr after finish()
  bool local_functions_ = false;  ///< some function symbols are local (STB_LOCAL)
};

}  // namespace rwd
