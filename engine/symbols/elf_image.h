// One ELF file on disk, read with libelf (elf(5)): its load layout, identity (build-id,
// .gnu_debuglink) and symbol tables.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rwd {

/// One entry of .symtab or .dynsym (elf(5) "Symbol table"): a function or a data object.
struct ElfSymbol {
  std::string name;       ///< as stored (mangled for C++)
  uint64_t value = 0;     ///< link-time virtual address (add the module's load bias)
  uint64_t size = 0;      ///< bytes; 0 when unknown
  bool function = false;  ///< STT_FUNC (or STT_GNU_IFUNC); else STT_OBJECT/STT_TLS
  bool global = false;    ///< STB_GLOBAL or STB_WEAK
};

/// The .gnu_debuglink section: the separate debug file's name and CRC-32 of its contents.
struct DebugLink {
  std::string name;
  uint32_t crc = 0;
};

/// An opened ELF file. Everything is read at open(); the object holds no file descriptor.
class ElfImage {
 public:
  /// Reads `path`. Throws Error ("PATH: not an ELF file", "PATH: No such file...").
  static std::unique_ptr<ElfImage> open(const std::string& path);

  const std::string& path() const { return path_; }
  /// True for ET_DYN (PIE executables, shared objects): loaded at a bias chosen at run time.
  bool relocatable() const { return relocatable_; }
  /// Virtual address of the first PT_LOAD segment, page aligned (bias = mapped start - this).
  uint64_t first_load_vaddr() const { return first_load_vaddr_; }
  /// Lowercase hex of the NT_GNU_BUILD_ID note, "" when absent.
  const std::string& build_id() const { return build_id_; }
  const std::optional<DebugLink>& debuglink() const { return debuglink_; }
  /// True when the file carries .debug_info with contents (not SHT_NOBITS).
  bool has_debug_info() const { return has_debug_info_; }
  /// PT_GNU_EH_FRAME segment (.eh_frame_hdr): link-time address and size, 0 when absent.
  uint64_t eh_frame_hdr_vaddr() const { return eh_frame_hdr_vaddr_; }
  uint64_t eh_frame_hdr_size() const { return eh_frame_hdr_size_; }
  /// PT_DYNAMIC segment's link-time address, 0 when absent (static executables).
  uint64_t dynamic_vaddr() const { return dynamic_vaddr_; }
  /// Link-time address range [lo, hi) covered by executable PT_LOAD segments.
  uint64_t text_lo() const { return text_lo_; }
  uint64_t text_hi() const { return text_hi_; }
  /// The file offset (bytes) that holds link-time address `vaddr`, by the PT_LOAD segments;
  /// nullopt when no segment has file bytes there.
  std::optional<uint64_t> file_offset(uint64_t vaddr) const;
  /// Functions and objects from .symtab and .dynsym (defined ones only, no duplicates).
  const std::vector<ElfSymbol>& symbols() const { return symbols_; }

 private:
  std::string path_;
  bool relocatable_ = false;
  uint64_t first_load_vaddr_ = 0, eh_frame_hdr_vaddr_ = 0, eh_frame_hdr_size_ = 0;
  uint64_t dynamic_vaddr_ = 0, text_lo_ = 0, text_hi_ = 0;
  std::string build_id_;
  std::optional<DebugLink> debuglink_;
  bool has_debug_info_ = false;
  std::vector<ElfSymbol> symbols_;
  struct Segment {
    uint64_t vaddr, offset, filesz;
  };
  std::vector<Segment> loads_;  ///< PT_LOAD segments
};

/// CRC-32 as .gnu_debuglink uses it (the zlib/ISO-HDLC polynomial) of a whole file; nullopt
/// when it cannot be read.
std::optional<uint32_t> file_crc32(const std::string& path);

}  // namespace rwd
