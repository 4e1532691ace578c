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

}  // namespace rwd
