// Thin C++ access to libdwarf: an opened DWARF file, DIEs by offset with automatic
// deallocation, attribute readers that follow DW_AT_abstract_origin/DW_AT_specification,
// and address ranges (DW_AT_low_pc/high_pc, DW_AT_ranges in DWARF 4 and 5).
#pragma once

#include <libdwarf.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rwd {

/// A global offset of a DIE in .debug_info.
using DieOffset = uint64_t;

/// A half-open range of link-time addresses [lo, hi).
struct AddressRange {
  uint64_t lo = 0, hi = 0;
  bool contains(uint64_t a) const { return a >= lo && a < hi; }
};

class DwarfFile;

/// One DIE, owned (dwarf_dealloc_die on destruction). Movable, not copyable.
class Die {
 public:
  Die() = default;
  Die(const DwarfFile* file, Dwarf_Die die) : file_(file), die_(die) {}
  Die(Die&& o) noexcept : file_(o.file_), die_(o.die_) { o.die_ = nullptr; }
  Die& operator=(Die&& o) noexcept;
  Die(const Die&) = delete;
  Die& operator=(const Die&) = delete;
  ~Die();

  explicit operator bool() const { return die_ != nullptr; }
  Dwarf_Die raw() const { return die_; }
  DieOffset offset() const;
  int tag() const;
  /// Children in order (empty for a leaf).
  std::vector<Die> children() const;
  bool has(int at) const;
  /// Attribute `at` as an unsigned/signed constant, or nullopt.
  std::optional<uint64_t> udata(int at) const;
  std::optional<int64_t> sdata(int at) const;
  bool flag(int at) const;
  /// String attribute, "" when absent.
  std::string string(int at) const;
  /// Reference attribute as a global DIE offset, or nullopt.
  std::optional<DieOffset> ref(int at) const;
  /// DW_AT_name, following DW_AT_abstract_origin and DW_AT_specification when absent.
  std::string name() const;
  /// Attribute `at` on this DIE or, when absent, on its abstract origin / specification
  /// (DWARF 5 sections 3.3.8.1 and 2.13.2). Returns the DIE that has it, or an empty Die.
  Die with_attr(int at) const;
  /// DW_AT_type's target offset (following origins), nullopt for void.
  std::optional<DieOffset> type() const;
  /// The code ranges of a subprogram, block, inlined subroutine or compile unit.
  std::vector<AddressRange> ranges() const;
  /// The DWARF file this DIE belongs to.
  const DwarfFile* file() const { return file_; }
  /// The DWARF version of this DIE's unit (2..5).
  int version() const;
  /// Runs `fn(Dwarf_Attribute)` on attribute `at` of this DIE if present (not following
  /// origins); returns false when absent.
  template <class F>
  bool with_raw_attr(int at, F&& fn) const {
    Dwarf_Attribute a = nullptr;
    if (!die_ || dwarf_attr(die_, Dwarf_Half(at), &a, nullptr) != DW_DLV_OK) return false;
    fn(a);
    dwarf_dealloc_attribute(a);
    return true;
  }

 private:
  const DwarfFile* file_ = nullptr;
  Dwarf_Die die_ = nullptr;
};

/// A DWARF file opened with libdwarf (compressed sections are decompressed by libdwarf).
class DwarfFile {
 public:
  /// Opens `path`. Throws Error when the file cannot be read or has no DWARF.
  explicit DwarfFile(const std::string& path);
  ~DwarfFile();
  DwarfFile(const DwarfFile&) = delete;
  DwarfFile& operator=(const DwarfFile&) = delete;

  Dwarf_Debug dbg() const { return dbg_; }
  const std::string& path() const { return path_; }
  /// The DIE at a global .debug_info offset; empty Die when invalid.
  Die die_at(DieOffset off) const;

 private:
  std::string path_;
  Dwarf_Debug dbg_ = nullptr;
};

}  // namespace rwd
