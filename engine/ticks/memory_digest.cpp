#include "memory_digest.h"

#include <sys/uio.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>

#include "engine/os/proc.h"
#include "engine/ticks/dead_stack.h"

namespace rwd {

namespace {
constexpr size_t kChunk = 1 << 20;

// Feeds [start, end) to the hash, chunk by chunk; pages that cannot be read (a file mapping
// past the end of its file) are hashed as absent, the same way in record and replay.
void hash_range(XXH3_state_t* st, pid_t tid, uint64_t start, uint64_t end,
                std::vector<uint8_t>& buf) {
  for (uint64_t p = start; p < end;) {
    size_t n = size_t(std::min<uint64_t>(kChunk, end - p));
    iovec local{buf.data(), n}, remote{reinterpret_cast<void*>(p), n};
    ssize_t r = process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (r <= 0) {
      uint64_t next_page = (p | 4095) + 1;  // skip the unreadable page
      XXH3_128bits_update(st, &p, sizeof p);
      p = next_page;
      continue;
    }
    XXH3_128bits_update(st, buf.data(), size_t(r));
    p += uint64_t(r);
  }
}
}  // namespace

MemoryDigest digest_memory(pid_t tid, const DigestExclusions& exclude) {
  return digest_memory(tid, read_proc_maps(tid), exclude);
}

namespace {
/// XXH3-128 of what digest_memory hashes, clipped to [lo, hi).
MemoryDigest digest_between(pid_t tid, const std::vector<ProcMapping>& maps,
                            const DigestExclusions& exclude, uint64_t lo, uint64_t hi,
                            size_t chunk) {
  DigestExclusions ex = exclude;
  std::sort(ex.begin(), ex.end());
  XXH3_state_t* st = XXH3_createState();
  XXH3_128bits_reset(st);
  std::vector<uint8_t> buf(chunk);
  for (const ProcMapping& m : maps) {
    if (!m.read || !m.write || m.shared || m.is_special()) continue;
    uint64_t p = std::max(m.start, lo), end = std::min(m.end, hi);
    if (p >= end) continue;
    for (const auto& [a, len] : ex) {
      uint64_t b = a + len;
      if (b <= p || a >= end) continue;
      if (a > p) hash_range(st, tid, p, a, buf);
      p = std::max(p, b);
    }
    if (p < end) hash_range(st, tid, p, end, buf);
  }
  XXH128_hash_t h = XXH3_128bits_digest(st);
  XXH3_freeState(st);
  return {h.low64, h.high64};
}
}  // namespace

MemoryDigest digest_memory(pid_t tid, const std::vector<ProcMapping>& maps,
                           const DigestExclusions& exclude) {
  return digest_between(tid, maps, exclude, 0, UINT64_MAX, kChunk);
}

MemoryDigest digest_stack_window(pid_t tid, const std::vector<ProcMapping>& maps,
                                 const DigestExclusions& exclude, uint64_t rsp) {
  uint64_t lo = rsp > kStackWindowBelow ? rsp - kStackWindowBelow : 0;
  uint64_t hi = rsp > UINT64_MAX - kStackWindowAbove ? UINT64_MAX : rsp + kStackWindowAbove;
  return digest_between(tid, maps, exclude, lo, hi, kStackWindowBelow + kStackWindowAbove);
}

LiveMemory live_memory(pid_t tid, const std::vector<uint64_t>& rsps) {
  LiveMemory m{read_proc_maps(tid), {}};
  for (uint64_t rsp : rsps)
    if (auto d = dead_stack(m.maps, rsp)) m.dead.push_back(*d);
  return m;
}

std::string digest_report(pid_t tid, const DigestExclusions& exclude) {
  std::string out;
  std::vector<uint8_t> buf(kChunk);
  for (const ProcMapping& m : read_proc_maps(tid)) {
    if (!m.read || !m.write || m.shared || m.is_special()) {
      char line[256];
      snprintf(line, sizeof line, "%lx-%lx %c%c%c %s (not hashed)\n", (unsigned long)m.start,
               (unsigned long)m.end, m.read ? 'r' : '-', m.write ? 'w' : '-', m.exec ? 'x' : '-',
               m.path.c_str());
      out += line;
      continue;
    }
    XXH3_state_t* st = XXH3_createState();
    XXH3_128bits_reset(st);
    hash_range(st, tid, m.start, m.end, buf);
    XXH128_hash_t h = XXH3_128bits_digest(st);
    XXH3_freeState(st);
    char line[256];
    snprintf(line, sizeof line, "%lx-%lx %s %016llx%016llx\n", (unsigned long)m.start,
             (unsigned long)m.end, m.path.c_str(), (unsigned long long)h.high64,
             (unsigned long long)h.low64);
    out += line;
  }
  (void)exclude;
  return out;
}

}  // namespace rwd
