// The instructions that read the time stamp counter (rdtsc, rdtscp) in an ELF file, and the
// faulting instructions that stand in for them where the CPU cannot be made to trap them
// (tsc_patch.h; DESIGN.md "Ticks, preemption and asynchronous signals").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rwd {

/// One rdtsc (0f 31, 2 bytes) or rdtscp (0f 01 f9, 3 bytes) instruction of a file.
struct RdtscSite {
  uint64_t offset = 0;  ///< file offset of its first byte
  uint8_t len = 0;      ///< 2 for rdtsc, 3 for rdtscp
};

/// The rdtsc and rdtscp instructions in the executable sections (SHF_EXECINSTR) of ELF file
/// `path`, by ascending file offset. A pair of bytes that spells one counts only where a
/// linear decode (capstone) from the start of its function (the .eh_frame_hdr table, LSB 5.0
/// "Exception Frame Header"), or of its section when no table covers it, lands on it. The
/// answer is kept per file (device, inode, size, change time): a later call for the same
/// file costs a stat. Empty for a file that is not ELF, has no section headers, or cannot be
/// read.
std::vector<RdtscSite> rdtsc_sites(const std::string& path);

/// The interrupt vector of the two-byte `int` (cd NN) that replaces an rdtsc. The kernel
/// gives user code no gate for it, so it raises #GP: SIGSEGV with si_code SI_KERNEL, as
/// rdtsc does under PR_SET_TSC (prctl(2)).
inline constexpr uint8_t kRdtscVector = 0xf3;
/// The vector of the `int` that replaces an rdtscp (cd NN 90: the nop keeps its length).
inline constexpr uint8_t kRdtscpVector = 0xf4;

/// An instruction that reads the time stamp counter, as it faults: native or replaced.
struct TscRead {
  uint8_t len = 0;  ///< bytes to step over when emulated
  bool rdtscp = false;
};

/// What the instruction at the start of `code` (`n` bytes) reads, when it is an rdtsc, an
/// rdtscp or their replacements (kRdtscVector, kRdtscpVector); nullopt for anything else.
std::optional<TscRead> decode_tsc_read(const uint8_t* code, size_t n);

/// The bytes that replace site `s`'s instruction (`s.len` of them).
std::vector<uint8_t> tsc_read_replacement(const RdtscSite& s);

/// The original bytes of the instruction that `code` (`n` bytes, at least `len`) replaced,
/// when `code` starts with a replacement of length `len`; nullopt otherwise.
std::optional<std::vector<uint8_t>> tsc_read_original(const uint8_t* code, size_t n, uint8_t len);

}  // namespace rwd
