// What a module's DWARF says about code: compile units, functions (with C++ qualified names),
// inlined-subroutine chains, global variables and line tables. Built lazily: opening reads
// only the unit headers; a unit's functions and lines are read the first time they are asked
// for, and name lookups read every unit once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/symbols/dwarf_file.h"

namespace rwd {

/// One row of a line-number program (DWARF 5 section 6.2.2), at a link-time address.
struct LineRow {
  uint64_t addr = 0;
  uint32_t file = 0;  ///< index into LineTable::files
  uint32_t line = 0;  ///< 1-based; 0 means "no line" (compiler-generated code)
  uint32_t column = 0;
  bool is_stmt = false;       ///< a recommended breakpoint / step stop
  bool prologue_end = false;  ///< first instruction after the prologue (clang sets it)
  bool end_sequence = false;  ///< first address past a contiguous sequence
};

/// A unit's line table: rows in sequence order (ascending addresses within a sequence).
struct LineTable {
  /// Absolute paths where known, normalized ("." and ".." collapsed: normal_source_path).
  std::vector<std::string> files;
  /// The same files with symbolic links resolved where they exist (real_source_path).
  std::vector<std::string> real_files;
  std::vector<LineRow> rows;
};

/// A compile unit.
struct CompileUnit {
  DieOffset die = 0;
  std::string name, comp_dir, producer;
  int language = 0;  ///< DW_LANG_*
  std::vector<AddressRange> ranges;
};

/// A function with code (DW_TAG_subprogram with addresses).
struct FunctionInfo {
  DieOffset die = 0;
  size_t unit = 0;
  std::string name;     ///< qualified as gdb shows it: "ns::Shape::area"
  std::string linkage;  ///< DW_AT_linkage_name (mangled), "" for C
  std::vector<AddressRange> ranges;
  uint64_t entry = 0;  ///< lowest address (DW_AT_low_pc or the first range)
  std::string decl_file;
  uint32_t decl_line = 0;
};

/// A global or static variable (DW_TAG_variable outside any function).
struct GlobalVariable {
  DieOffset die = 0;  ///< the defining DIE (with DW_AT_location)
  size_t unit = 0;
  std::string name;  ///< qualified ("ns::counter")
};

/// The DWARF of one module. Thread-compatible: one thread at a time.
class DwarfIndex {
 public:
  /// Reads unit headers of `path`. Throws Error when the file has no usable DWARF.
  explicit DwarfIndex(const std::string& path);

  const DwarfFile& file() const { return *file_; }
  const std::vector<CompileUnit>& units() const { return units_; }
  /// Index of the unit whose ranges contain link-time `addr`, nullopt when none.
  std::optional<size_t> unit_at(uint64_t addr);
  /// The unit's line table (read on first use).
  const LineTable& lines(size_t unit);
  /// The functions defined in `unit` (read on first use).
  const std::vector<FunctionInfo>& functions(size_t unit);
  /// The function containing link-time `addr`, nullptr when none.
  const FunctionInfo* function_at(uint64_t addr);
  /// Inlined-subroutine DIEs containing `addr` inside `fn`, outermost first.
  std::vector<DieOffset> inline_chain(const FunctionInfo& fn, uint64_t addr);
  /// Functions named `name` (qualified or not; "f" also matches "ns::f"), across all units.
  std::vector<const FunctionInfo*> functions_named(const std::string& name);
  /// Globals named `name` (qualified or not), preferring those of `unit` first.
  std::vector<const GlobalVariable*> globals_named(const std::string& name,
                                                   std::optional<size_t> unit = {});
  /// The globals of `unit`.
  std::vector<const GlobalVariable*> globals_of(size_t unit);
  /// An enumerator constant by name (C enums put them in the enclosing scope): its enum
  /// type's DIE and value, searching `unit` first.
  std::optional<std::pair<DieOffset, int64_t>> enumerator_named(const std::string& name,
                                                                std::optional<size_t> unit = {});
  /// The qualified name of a type DIE declared in a namespace or class ("std::string",
  /// "geo::Shape"), "" when it has none.
  std::string qualified_type_name(DieOffset die);
  /// The unit holding a DIE offset.
  std::optional<size_t> unit_of(DieOffset die) const;
  /// A named type (struct/class/union/enum/typedef/base) by name, first in `unit`.
  std::optional<DieOffset> type_named(const std::string& name, std::optional<size_t> unit = {});
  /// The row for link-time `addr` (the last row at or before it in its sequence), with its
  /// unit; nullopt when the address has no line information.
  std::optional<std::pair<size_t, LineRow>> line_at(uint64_t addr);
  /// Where a breakpoint at `file`:`line` binds, as gdb binds it: in each function (and each
  /// inlined copy) with is_stmt rows for the line, the lowest such address. When no code has
  /// that line, the nearest following line that has code is used ("moved" breakpoints);
  /// `bound_line` (when given) receives the line used, 0 when nothing matched. Link-time
  /// addresses, ascending.
  std::vector<uint64_t> line_addresses(const std::string& file, uint32_t line,
                                       uint32_t* bound_line = nullptr);
  /// The lines from `first` to `last` of `file` that have code (is_stmt rows), where a
  /// breakpoint binds without moving (DAP breakpointLocations). One pass over the rows.
  std::set<uint32_t> lines_with_code(const std::string& file, uint32_t first, uint32_t last);
  /// The first address after the prologue of `fn` (DWARF prologue_end when present, else
  /// the address of the second line of the function, as gdb's prologue analysis does).
  uint64_t after_prologue(const FunctionInfo& fn);

 private:
  struct UnitData {
    bool lines_read = false, functions_read = false;
    LineTable lines;
    std::vector<FunctionInfo> functions;
    std::vector<GlobalVariable> globals;
    std::map<std::string, DieOffset> types;
    std::map<DieOffset, std::string> type_names;  // the reverse of `types`
    std::map<std::string, std::pair<DieOffset, int64_t>> enumerators;
  };
  void read_unit(size_t unit);
  void read_all_units();
  /// Per unit, per file index: whether the file is the one a user named `file` (normalized,
  /// or with symbolic links resolved; path_matches).
  std::vector<std::vector<bool>> files_named(const std::string& file);

  std::unique_ptr<DwarfFile> file_;
  std::vector<CompileUnit> units_;
  std::vector<UnitData> data_;
  bool all_read_ = false;
};

}  // namespace rwd
