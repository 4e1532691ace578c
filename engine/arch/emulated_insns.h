// The instructions whose results depend on the machine and the moment, which rewind records
// and replays instead of running them natively: rdtsc and rdtscp (the time stamp counter),
// and cpuid (whose leaf 1 holds the APIC id of the CPU the thread runs on, and ld.so keeps it
// in its data). Where they are, in an ELF file, and the faulting instructions that stand in
// for them (insn_patch.h; DESIGN.md "Ticks, preemption and asynchronous signals").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rwd {

/// Which instruction an emulated site holds.
enum class EmulatedOp : uint8_t {
  Rdtsc,   ///< 0f 31: edx:eax = the time stamp counter
  Rdtscp,  ///< 0f 01 f9: rdtsc, and ecx = IA32_TSC_AUX
  Cpuid,   ///< 0f a2: eax, ebx, ecx, edx = CPUID leaf eax, subleaf ecx
};

/// One rdtsc (0f 31, 2 bytes), rdtscp (0f 01 f9, 3 bytes) or cpuid (0f a2, 2 bytes)
/// instruction of a file.
struct EmulatedSite {
  uint64_t offset = 0;  ///< file offset of its first byte
  uint8_t len = 0;      ///< its length in bytes
  EmulatedOp op = EmulatedOp::Rdtsc;
};

/// The rdtsc, rdtscp and cpuid instructions in the executable sections (SHF_EXECINSTR) of
/// ELF file `path`, by ascending file offset. A pair of bytes that spells one counts only
/// where a linear decode (capstone) from the start of its function (the .eh_frame_hdr
/// table, LSB 5.0 "Exception Frame Header"), or of its section when no table covers it,
/// lands on it. The answer is kept per file (device, inode, size, modification time) in
/// memory, and on disk by build-id or file (emulated_sites_cache.h: ElfIdentity): a later call
/// for the same file costs a stat, and in a later rewind process an ELF header read. Empty for a
/// file that is not ELF, has no section headers, or cannot be read.
std::vector<EmulatedSite> emulated_sites(const std::string& path);

/// The search itself, as emulated_sites does it on a cache miss, without any cache.
std::vector<EmulatedSite> find_emulated_sites(const std::string& path);

/// The interrupt vector of the two-byte `int` (cd NN) that replaces an rdtsc. The kernel
/// gives user code no gate for it, so it raises #GP: SIGSEGV with si_code SI_KERNEL, as
/// rdtsc does under PR_SET_TSC (prctl(2)).
inline constexpr uint8_t kRdtscVector = 0xf3;
/// The vector of the `int` that replaces an rdtscp (cd NN 90: the nop keeps its length).
inline constexpr uint8_t kRdtscpVector = 0xf4;
/// The vector of the `int` that replaces a cpuid (cd NN), faulting as kRdtscVector does.
inline constexpr uint8_t kCpuidVector = 0xf5;

/// An emulated instruction as it faults: native (rdtsc under PR_SET_TSC) or replaced.
struct EmulatedInsn {
  uint8_t len = 0;  ///< bytes to step over when emulated
  EmulatedOp op = EmulatedOp::Rdtsc;
};

/// What the instruction at the start of `code` (`n` bytes) is, when it is an rdtsc, an
/// rdtscp, a cpuid or one of their replacements (kRdtscVector, kRdtscpVector, kCpuidVector);
/// nullopt for anything else.
std::optional<EmulatedInsn> decode_emulated(const uint8_t* code, size_t n);

/// The bytes that replace site `s`'s instruction (`s.len` of them).
std::vector<uint8_t> emulated_replacement(const EmulatedSite& s);

/// The original bytes of the instruction that `code` (`n` bytes, at least `len`) replaced,
/// when `code` starts with a replacement of length `len`; nullopt otherwise.
std::optional<std::vector<uint8_t>> emulated_original(const uint8_t* code, size_t n, uint8_t len);

}  // namespace rwd
