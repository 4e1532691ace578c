// A module: one ELF file mapped into a process (the executable, a shared object, the dynamic
// loader), with its load bias, identity, symbols and (when found) DWARF.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "engine/symbols/dwarf_index.h"
#include "engine/symbols/elf_image.h"
#include "engine/symbols/symbol_table.h"
#include "engine/symbols/types.h"

namespace rwd {

/// One mapped ELF file. Addresses named "link" are as in the file; runtime = link + bias.
class Module {
 public:
  /// Reads the ELF file `file` (as mapped, maybe a trace's saved copy) whose first byte is
  /// mapped at runtime address `header_addr`; `display_path` is the path the program used.
  /// Finds separate debug info. Throws Error when `file` is not a readable x86-64 ELF file.
  Module(std::string file, std::string display_path, uint64_t header_addr);

  const std::string& path() const { return display_path_; }  ///< as the program named it
  const std::string& file() const { return file_; }          ///< the file read
  uint64_t bias() const { return bias_; }                    ///< runtime minus link-time address
  uint64_t lo() const { return lo_; }  ///< runtime range of its mappings [lo, hi)
  uint64_t hi() const { return hi_; }
  void set_range(uint64_t lo, uint64_t hi) { lo_ = lo, hi_ = hi; }
  void set_display_path(std::string p) { display_path_ = std::move(p); }
  const std::string& build_id() const { return elf_->build_id(); }
  const ElfImage& elf() const { return *elf_; }
  /// Path of the file the DWARF came from ("" when none was found).
  const std::string& debug_file() const { return debug_file_; }
  bool has_symbols() const { return symbols_.size() > 0; }
  bool has_debug_info() const { return !debug_file_.empty(); }
  const SymbolTable& symbols() const { return symbols_; }
  /// The function containing link-time address `link`: its symbol (SymbolTable::function_at),
  /// else a part named with name_part(); nullptr when neither.
  const Symbol* function_at(uint64_t link) const;
  /// Names the code at link-time addresses [lo, hi) as a part of function `name`
  /// (function_parts.h: code its compiler split off, which a stripped file leaves unnamed),
  /// so that stacks and disassembly name it. Learnt after loading, hence const: it changes
  /// no answer the file's own symbols give.
  void name_part(const std::string& name, uint64_t lo, uint64_t hi) const;
  /// The DWARF index, opened on first use; nullptr when the module has no debug info (or it
  /// could not be read: the reason is in dwarf_error()).
  DwarfIndex* dwarf();
  const std::string& dwarf_error() const { return dwarf_error_; }
  /// Whether the DWARF was opened (or tried) yet: dwarf() was called.
  bool dwarf_tried() const { return dwarf_tried_; }
  /// The functions named `name` in the module's DWARF (DwarfIndex::functions_named), empty
  /// without DWARF. Where the symbols show no function of that name
  /// (SymbolTable::may_name_function), the DWARF is neither opened nor read: a name lookup
  /// reads every unit, about 0.5 s for libc's.
  std::vector<const FunctionInfo*> functions_named(const std::string& name);
  /// Types of this module's DWARF (requires dwarf() != nullptr).
  TypeReader& types();

  uint64_t to_link(uint64_t runtime) const { return runtime - bias_; }
  uint64_t to_runtime(uint64_t link) const { return link + bias_; }
  bool contains(uint64_t runtime) const { return runtime >= lo_ && runtime < hi_; }

 private:
  std::string file_, display_path_, debug_file_, dwarf_error_;
  uint64_t bias_ = 0, lo_ = 0, hi_ = 0;
  std::unique_ptr<ElfImage> elf_;
  SymbolTable symbols_;
  /// name_part()'s, at most a few; a deque, so that function_at's pointers stay valid as
  /// more are named.
  mutable std::deque<Symbol> parts_;
  std::unique_ptr<DwarfIndex> dwarf_;
  std::unique_ptr<TypeReader> types_;
  bool dwarf_tried_ = false;
};

}  // namespace rwd
