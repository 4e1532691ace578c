// emulated_sites (engine/arch/emulated_insns.h): the fast search (a byte scan, each candidate
// decoded from its function's start) must find what a decode of every executable section
// finds, in the libraries this test runs with and in tsc_reads, whose mov immediate holds
// the bytes of an rdtsc that is not one.
#include "engine/arch/emulated_insns.h"

#include <capstone/capstone.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "engine/arch/emulated_sites_cache.h"
#include "engine/os/insn_patch.h"
#include "test_dir.h"

using namespace rwd;

namespace {

/// File offsets of rdtsc/rdtscp/cpuid found by decoding every SHF_EXECINSTR section of
/// `path` from its start (as objdump -d does), with their lengths.
std::set<std::pair<uint64_t, int>> full_decode(const std::string& path) {
  std::set<std::pair<uint64_t, int>> out;
  int fd = open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  REQUIRE(elf);
  csh h;
  REQUIRE(cs_open(CS_ARCH_X86, CS_MODE_64, &h) == CS_ERR_OK);
  cs_insn* insn = cs_malloc(h);
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR)) continue;
    Elf_Data* d = elf_getdata(scn, nullptr);
    auto* start = static_cast<const uint8_t*>(d->d_buf);
    const uint8_t* p = start;
    size_t left = d->d_size;
    uint64_t addr = sh.sh_addr;
    while (left > 0) {
      if (!cs_disasm_iter(h, &p, &left, &addr, insn)) {
        ++p, --left, ++addr;
        continue;
      }
      if (insn->id == X86_INS_RDTSC || insn->id == X86_INS_RDTSCP || insn->id == X86_INS_CPUID)
        out.insert({sh.sh_offset + (insn->address - sh.sh_addr), insn->size});
    }
  }
  cs_free(insn, 1);
  cs_close(&h);
  elf_end(elf);
  close(fd);
  return out;
}

std::set<std::pair<uint64_t, int>> fast(const std::string& path) {
  std::set<std::pair<uint64_t, int>> out;
  for (const EmulatedSite& s : find_emulated_sites(path)) out.insert({s.offset, s.len});
  return out;
}

/// The file offset of symbol `name` in ELF file `path` (its .symtab), or 0.
uint64_t symbol_offset(const std::string& path, const char* name) {
  int fd = open(path.c_str(), O_RDONLY);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  uint64_t value = 0, out = 0;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) && !value) {
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    if (sh.sh_type != SHT_SYMTAB) continue;
    Elf_Data* d = elf_getdata(scn, nullptr);
    for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
      GElf_Sym sym;
      gelf_getsym(d, int(i), &sym);
      const char* n = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (n && strcmp(n, name) == 0) value = sym.st_value;
    }
  }
  scn = nullptr;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    if (sh.sh_type == SHT_PROGBITS && value >= sh.sh_addr && value < sh.sh_addr + sh.sh_size)
      out = sh.sh_offset + (value - sh.sh_addr);
  }
  elf_end(elf);
  close(fd);
  return out;
}

}  // namespace

TEST_CASE("the rdtsc and cpuid search finds what a full decode finds in the loaded libraries") {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  std::set<std::string> files;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, off, dev, inode, path;
    in >> range >> perms >> off >> dev >> inode >> path;
    if (perms.find('x') != std::string::npos && !path.empty() && path[0] == '/') files.insert(path);
  }
  REQUIRE(files.size() >= 2);  // this test and its libraries (the loader has rdtsc in it)
  size_t total = 0, cpuids = 0;
  for (const std::string& f : files) {
    INFO(f);
    auto want = full_decode(f);
    CHECK(fast(f) == want);
    total += want.size();
    for (const EmulatedSite& s : find_emulated_sites(f)) cpuids += s.op == EmulatedOp::Cpuid;
  }
  CHECK(total > 0);
  CHECK(cpuids > 0);  // the loader's init_cpu_features
}

TEST_CASE("the rdtsc search takes real instructions and leaves the same bytes in an immediate") {
  const std::string prog = TSC_READS_PATH;
  auto sites = fast(prog);
  CHECK(sites == full_decode(prog));
  uint64_t a = symbol_offset(prog, "tsc_read_a"), b = symbol_offset(prog, "tsc_read_b"),
           decoy = symbol_offset(prog, "tsc_decoy");
  REQUIRE((a && b && decoy));
  CHECK(sites.count({a, 2}) == 1);          // rdtsc, the function's first instruction
  CHECK(sites.count({b + 3, 3}) == 1);      // rdtscp, after a 3-byte mov
  CHECK(sites.count({decoy + 1, 2}) == 0);  // the 0f 31 of `mov $0x310f, %eax`
  CHECK(sites.size() == 2);
}

TEST_CASE("the stand-ins for rdtsc, rdtscp and cpuid decode as what they replace") {
  for (EmulatedSite s :
       {EmulatedSite{0, 2, EmulatedOp::Rdtsc}, EmulatedSite{0, 3, EmulatedOp::Rdtscp},
        EmulatedSite{0, 2, EmulatedOp::Cpuid}}) {
    std::vector<uint8_t> with = emulated_replacement(s);
    REQUIRE(with.size() == s.len);
    CHECK(with[0] == 0xcd);
    auto read = decode_emulated(with.data(), with.size());
    REQUIRE(read);
    CHECK(read->len == s.len);
    CHECK(read->op == s.op);
    auto orig = emulated_original(with.data(), with.size(), s.len);
    REQUIRE(orig);
    auto native = decode_emulated(orig->data(), orig->size());
    REQUIRE(native);
    CHECK(native->len == s.len);
    CHECK(native->op == s.op);
    CHECK((*orig)[0] == 0x0f);
  }
  const uint8_t int3[] = {0xcc, 0x90}, other_int[] = {0xcd, 0x80}, ud2[] = {0x0f, 0x0b};
  CHECK(!decode_emulated(int3, 2));
  CHECK(!decode_emulated(other_int, 2));
  CHECK(!decode_emulated(ud2, 2));
}

TEST_CASE("the search's answers kept on disk are used for the same file only") {
  TestDir dir;
  setenv("REWIND_CACHE_DIR", dir.path.c_str(), 1);
  const std::string prog = TSC_READS_PATH;
  std::vector<EmulatedSite> found = find_emulated_sites(prog);
  REQUIRE(found.size() == 2);
  // The first call searches and stores; what is stored is what the search found.
  std::vector<EmulatedSite> first = emulated_sites(prog);
  struct stat st;
  REQUIRE(stat(prog.c_str(), &st) == 0);
  ElfIdentity id = elf_identity(st, "");
  // tsc_reads is built with a build-id (the compiler's default on Debian): without it, the
  // identity is another file's.
  CHECK(!load_cached_sites(id));
  auto same = [](const std::vector<EmulatedSite>& a, const std::vector<EmulatedSite>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].offset != b[i].offset || a[i].len != b[i].len || a[i].op != b[i].op) return false;
    return true;
  };
  CHECK(same(first, found));
  std::string entry;
  for (const auto& e : std::filesystem::directory_iterator(dir / "emulated-sites"))
    entry = e.path();
  REQUIRE(!entry.empty());
  // Without a build-id, the file is named by place and time: another modification time is
  // another file.
  std::vector<EmulatedSite> stored = {EmulatedSite{7, 2, EmulatedOp::Cpuid}};
  store_cached_sites(id, stored);
  auto back = load_cached_sites(id);
  REQUIRE(back);
  CHECK(same(*back, stored));
  struct stat later = st;
  later.st_mtim.tv_nsec = (later.st_mtim.tv_nsec + 1) % 1000000000;
  CHECK(!load_cached_sites(elf_identity(later, "")));
  // With one, by build-id and size: a copy elsewhere (another inode and time) is the same
  // file, and another size is not.
  id = elf_identity(st, "0123456789abcdef0123");
  store_cached_sites(id, stored);
  struct stat copy = later;
  copy.st_ino += 1;
  back = load_cached_sites(elf_identity(copy, "0123456789abcdef0123"));
  REQUIRE(back);
  CHECK(same(*back, stored));
  copy.st_size += 1;
  CHECK(!load_cached_sites(elf_identity(copy, "0123456789abcdef0123")));
  // A damaged entry is ignored: cut short, or with an op that does not exist (alone in a
  // cache directory of its own).
  std::string alone = dir / "alone";
  setenv("REWIND_CACHE_DIR", alone.c_str(), 1);
  store_cached_sites(id, stored);
  REQUIRE(load_cached_sites(id));
  for (const auto& e : std::filesystem::directory_iterator(alone + "/emulated-sites")) {
    std::string p = e.path();
    std::filesystem::resize_file(p, std::filesystem::file_size(p) - 1);
    CHECK(!load_cached_sites(id));
    store_cached_sites(id, stored);
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put(char(9));
    f.close();
    CHECK(!load_cached_sites(id));
  }
  unsetenv("REWIND_CACHE_DIR");
}
