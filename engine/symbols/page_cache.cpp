#include "page_cache.h"

#include <algorithm>
#include <cstring>

namespace rwd {

namespace {
constexpr uint64_t kPageSize = 4096;
}

bool PageCache::read(uint64_t addr, void* out, size_t n) {
  uint8_t* dst = static_cast<uint8_t*>(out);
  while (n) {
    uint64_t page = addr & ~(kPageSize - 1);
    auto it = pages_.find(page);
    if (it == pages_.end()) it = pages_.emplace(page, target_.read_memory(page, kPageSize)).first;
    size_t off = size_t(addr - page), take = std::min(n, size_t(kPageSize) - off);
    if (off + take > it->second.size()) return false;
    std::memcpy(dst, it->second.data() + off, take);
    dst += take, addr += take, n -= take;
  }
  return true;
}

std::vector<uint8_t> CachedTarget::read_memory(uint64_t addr, size_t len) {
  // Byte by byte only where a page is partly readable: the common case is one copy.
  std::vector<uint8_t> out(len);
  if (pages_.read(addr, out.data(), len)) return out;
  size_t n = 0;
  while (n < len && pages_.read(addr + n, out.data() + n, 1)) ++n;
  out.resize(n);
  return out;
}

Registers CachedTarget::registers(pid_t tid) {
  auto it = regs_.find(tid);
  if (it == regs_.end()) it = regs_.emplace(tid, target_.registers(tid)).first;
  return it->second;
}

}  // namespace rwd
