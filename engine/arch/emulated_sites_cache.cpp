// The rdtsc/cpuid search's answers on disk (emulated_sites_cache.h).
//
// One file per searched ELF file, named by a hash of its identity. Layout (little-endian):
// magic "RWDSITES", u32 format, the identity (u64 dev, ino, size; i64 mtime_ns; u32 build-id
// length and its bytes), u32 site count, then per site u64 offset, u8 length, u8 op.
#include "engine/arch/emulated_sites_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdio>
#include <cstring>

#include "engine/os/cache_files.h"

namespace rwd {

namespace {

constexpr char kMagic[8] = {'R', 'W', 'D', 'S', 'I', 'T', 'E', 'S'};
/// Raise when the search's rules change, so that older answers are not used.
constexpr uint32_t kFormat = 1;
constexpr size_t kMaxEntry = 1 << 20;  // bytes read from one entry at most
constexpr size_t kMaxBuildId = 64;     // a GNU build-id is 20 bytes (SHA-1) or 16 (MD5)

struct Bytes {
  std::string s;
  template <class T>
  void put(T v) {
    s.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
};

struct Reader {
  const std::string& s;
  size_t at = 0;
  template <class T>
  bool get(T& v) {
    if (s.size() - at < sizeof v) return false;
    memcpy(&v, s.data() + at, sizeof v);
    at += sizeof v;
    return true;
  }
};

/// The entry's bytes before the sites: magic, format and identity.
std::string header(const ElfIdentity& id) {
  Bytes b;
  b.s.assign(kMagic, sizeof kMagic);
  b.put(kFormat);
  b.put(id.dev);
  b.put(id.ino);
  b.put(id.size);
  b.put(id.mtime_ns);
  b.put(uint32_t(id.build_id.size()));
  b.s += id.build_id;
  return b.s;
}

std::string entry_path(const std::string& dir, const std::string& head) {
  char name[32];
  snprintf(name, sizeof name, "%016llx", (unsigned long long)XXH64(head.data(), head.size(), 0));
  return dir + "/" + name;
}

std::string sites_dir() {
  std::string root = rewind_cache_dir();
  return root.empty() ? root : root + "/emulated-sites";
}

}  // namespace

ElfIdentity elf_identity(const struct stat& st, std::string build_id) {
  ElfIdentity id;
  id.size = uint64_t(st.st_size);
  if (build_id.empty()) {
    id.dev = uint64_t(st.st_dev);
    id.ino = uint64_t(st.st_ino);
    id.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  id.build_id = std::move(build_id);
  return id;
}

std::optional<std::vector<EmulatedSite>> load_cached_sites(const ElfIdentity& id) {
  if (id.build_id.size() > kMaxBuildId) return std::nullopt;
  std::string dir = sites_dir();
  if (dir.empty()) return std::nullopt;
  std::string head = header(id);
  int fd = ::open(entry_path(dir, head).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0 || size_t(st.st_size) > kMaxEntry) {
    ::close(fd);
    return std::nullopt;
  }
  std::string data(size_t(st.st_size), '\0');
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n <= 0) break;
    got += size_t(n);
  }
  ::close(fd);
  data.resize(got);
  if (data.compare(0, head.size(), head) != 0) return std::nullopt;  // another file, or torn
  Reader r{data, head.size()};
  uint32_t count = 0;
  if (!r.get(count) || count > (data.size() - r.at) / 10) return std::nullopt;
  std::vector<EmulatedSite> sites(count);
  for (EmulatedSite& s : sites) {
    uint8_t op = 0;
    if (!r.get(s.offset) || !r.get(s.len) || !r.get(op) || op > uint8_t(EmulatedOp::Cpuid))
      return std::nullopt;
    s.op = EmulatedOp(op);
  }
  if (r.at != data.size()) return std::nullopt;
  return sites;
}

void store_cached_sites(const ElfIdentity& id, const std::vector<EmulatedSite>& sites) {
  if (id.build_id.size() > kMaxBuildId) return;
  std::string dir = sites_dir();
  if (dir.empty()) return;
  Bytes b;
  b.s = header(id);
  std::string path = entry_path(dir, b.s);
  b.put(uint32_t(sites.size()));
  for (const EmulatedSite& s : sites) {
    b.put(s.offset);
    b.put(s.len);
    b.put(uint8_t(s.op));
  }
  replace_file(path, b.s);  // best effort: a cache that cannot be written is left alone
}

}  // namespace rwd
