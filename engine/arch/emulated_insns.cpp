// Finding rdtsc, rdtscp and cpuid in an ELF file (emulated_insns.h): a byte scan for
// candidates, each confirmed by decoding from the start of its function.
#include "engine/arch/emulated_insns.h"

#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include "engine/arch/capstone_api.h"
#include "engine/arch/emulated_sites_cache.h"

namespace rwd {

namespace {

/// An ELF file opened with libelf, closed when it goes.
struct ElfFile {
  int fd = -1;
  Elf* elf = nullptr;
  explicit ElfFile(const std::string& path) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE) return;
    elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  }
  ~ElfFile() {
    if (elf) elf_end(elf);
    if (fd >= 0) ::close(fd);
  }
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
};

/// A capstone x86-64 decoder without details, closed when it goes.
struct Decoder {
  csh handle = 0;
  cs_insn* insn = nullptr;
  Decoder() {
    if (capstone::open(CS_ARCH_X86, CS_MODE_64, &handle) != CS_ERR_OK) {
      handle = 0;
      return;
    }
    insn = capstone::malloc(handle);
  }
  ~Decoder() {
    if (insn) capstone::free(insn, 1);
    if (handle) capstone::close(&handle);
  }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  /// Where the last linear decode started (a function's start) and the first instruction
  /// boundary it reached at or past its target: a later target in the same function goes on
  /// from there, so the candidates of one function cost one decode of it, not one each.
  uint64_t walk_from = ~0ull, walk_at = 0;

  /// Whether a linear decode of `code` (`size` bytes loaded at `addr`) from `from` lands on
  /// `at`, and the instruction there is rdtsc, rdtscp or cpuid. Undecodable bytes are passed
  /// over one at a time, as objdump does. Targets of one `from` must come in ascending order.
  bool emulated_at(const uint8_t* code, size_t size, uint64_t addr, uint64_t from, uint64_t at) {
    uint64_t a = from;
    if (from == walk_from && walk_at >= from) a = walk_at;
    if (a > at) return false;  // the decode went past `at` without landing on it
    while (a < at) {
      const uint8_t* p = code + (a - addr);
      size_t left = size_t(addr + size - a);
      uint64_t next = a;
      if (capstone::disasm_iter(handle, &p, &left, &next, insn))
        a = next;
      else
        ++a;
    }
    walk_from = from;
    walk_at = a;
    if (a != at) return false;
    const uint8_t* p = code + (at - addr);
    size_t left = size_t(addr + size - at);
    uint64_t next = at;
    return capstone::disasm_iter(handle, &p, &left, &next, insn) &&
           (insn->id == X86_INS_RDTSC || insn->id == X86_INS_RDTSCP || insn->id == X86_INS_CPUID);
  }
};

/// The function start addresses of .eh_frame_hdr's binary-search table (LSB 5.0, "Exception
/// Frame Header"), ascending; empty without one or with encodings other than the usual
/// (fde_count udata4, table datarel sdata4).
std::vector<uint64_t> function_starts(Elf* elf, size_t shstrndx) {
  std::vector<uint64_t> out;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name || strcmp(name, ".eh_frame_hdr") != 0) continue;
    Elf_Data* d = elf_getdata(scn, nullptr);
    if (!d || d->d_size < 12) return out;
    auto* h = static_cast<const uint8_t*>(d->d_buf);
    if (h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b) return out;
    uint32_t count;
    memcpy(&count, h + 8, 4);
    if (12 + uint64_t(count) * 8 > d->d_size) return out;
    out.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      int32_t rel;
      memcpy(&rel, h + 12 + uint64_t(i) * 8, 4);
      out.push_back(sh.sh_addr + uint64_t(int64_t(rel)));
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  return out;
}

/// The bytes of `elf`'s NT_GNU_BUILD_ID note (elf(5)), or "" without one.
std::string build_id(Elf* elf) {
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE) continue;
    Elf_Data* d = elf_getdata(scn, nullptr);
    if (!d) continue;
    GElf_Nhdr nh;
    size_t off = 0, name_at = 0, desc_at = 0;
    while ((off = gelf_getnote(d, off, &nh, &name_at, &desc_at)) > 0) {
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
          memcmp(static_cast<const char*>(d->d_buf) + name_at, "GNU", 4) == 0)
        return std::string(static_cast<const char*>(d->d_buf) + desc_at, nh.n_descsz);
    }
  }
  return "";
}

std::vector<EmulatedSite> find_sites(ElfFile& f) {
  std::vector<EmulatedSite> out;
  size_t shstrndx = 0;
  if (!f.elf || elf_kind(f.elf) != ELF_K_ELF || elf_getshdrstrndx(f.elf, &shstrndx) != 0)
    return out;
  Decoder dec;
  if (!dec.handle || !dec.insn) return out;
  std::vector<uint64_t> starts;
  bool starts_read = false;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(f.elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
      continue;
    Elf_Data* d = elf_getdata(scn, nullptr);
    if (!d || !d->d_buf || d->d_size < 2) continue;
    auto* code = static_cast<const uint8_t*>(d->d_buf);
    size_t size = d->d_size;
    for (size_t i = 0; i + 1 < size; ++i) {
      const void* hit = memchr(code + i, 0x0f, size - 1 - i);
      if (!hit) break;
      i = size_t(static_cast<const uint8_t*>(hit) - code);
      const uint8_t* p = code + i;
      EmulatedSite site{sh.sh_offset + i, 2, EmulatedOp::Rdtsc};
      if (p[1] == 0xa2)
        site.op = EmulatedOp::Cpuid;
      else if (p[1] == 0x01 && i + 2 < size && p[2] == 0xf9)
        site = {sh.sh_offset + i, 3, EmulatedOp::Rdtscp};
      else if (p[1] != 0x31)
        continue;
      if (!starts_read) {
        starts = function_starts(f.elf, shstrndx);
        starts_read = true;
      }
      uint64_t at = sh.sh_addr + i, from = sh.sh_addr;
      auto it = std::upper_bound(starts.begin(), starts.end(), at);
      if (it != starts.begin() && *std::prev(it) >= sh.sh_addr) from = *std::prev(it);
      if (dec.emulated_at(code, size, sh.sh_addr, from, at)) out.push_back(site);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const EmulatedSite& a, const EmulatedSite& b) { return a.offset < b.offset; });
  return out;
}

}  // namespace

std::vector<EmulatedSite> find_emulated_sites(const std::string& path) {
  ElfFile f(path);
  return find_sites(f);
}

std::vector<EmulatedSite> emulated_sites(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return {};
  using Key = std::tuple<dev_t, ino_t, off_t, int64_t>;
  const int64_t mtime = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  Key key{st.st_dev, st.st_ino, st.st_size, mtime};
  static std::mutex mu;
  static std::map<Key, std::vector<EmulatedSite>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  ElfFile f(path);
  if (!f.elf) return {};
  ElfIdentity id = elf_identity(st, build_id(f.elf));
  std::vector<EmulatedSite> sites;
  if (auto stored = load_cached_sites(id)) {
    sites = std::move(*stored);
  } else {
    sites = find_sites(f);
    store_cached_sites(id, sites);
  }
  std::lock_guard<std::mutex> lock(mu);
  cache[key] = sites;
  return sites;
}

std::optional<EmulatedInsn> decode_emulated(const uint8_t* code, size_t n) {
  if (n < 2) return std::nullopt;
  if (code[0] == 0x0f && code[1] == 0x31) return EmulatedInsn{2, EmulatedOp::Rdtsc};
  if (code[0] == 0x0f && code[1] == 0xa2) return EmulatedInsn{2, EmulatedOp::Cpuid};
  if (n >= 3 && code[0] == 0x0f && code[1] == 0x01 && code[2] == 0xf9)
    return EmulatedInsn{3, EmulatedOp::Rdtscp};
  if (code[0] != 0xcd) return std::nullopt;
  if (code[1] == kRdtscVector) return EmulatedInsn{2, EmulatedOp::Rdtsc};
  if (code[1] == kCpuidVector) return EmulatedInsn{2, EmulatedOp::Cpuid};
  if (n >= 3 && code[1] == kRdtscpVector && code[2] == 0x90)
    return EmulatedInsn{3, EmulatedOp::Rdtscp};
  return std::nullopt;
}

std::vector<uint8_t> emulated_replacement(const EmulatedSite& s) {
  switch (s.op) {
    case EmulatedOp::Rdtscp:
      return {0xcd, kRdtscpVector, 0x90};
    case EmulatedOp::Cpuid:
      return {0xcd, kCpuidVector};
    case EmulatedOp::Rdtsc:
      break;
  }
  return {0xcd, kRdtscVector};
}

std::optional<std::vector<uint8_t>> emulated_original(const uint8_t* code, size_t n, uint8_t len) {
  if (n < len || len < 2 || code[0] != 0xcd) return std::nullopt;
  if (len == 2 && code[1] == kRdtscVector) return std::vector<uint8_t>{0x0f, 0x31};
  if (len == 2 && code[1] == kCpuidVector) return std::vector<uint8_t>{0x0f, 0xa2};
  if (len == 3 && code[1] == kRdtscpVector && code[2] == 0x90)
    return std::vector<uint8_t>{0x0f, 0x01, 0xf9};
  return std::nullopt;
}

}  // namespace rwd
