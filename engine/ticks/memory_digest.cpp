#include "memory_digest.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"
#include "engine/ticks/dead_stack.h"

namespace rwd {

namespace {
constexpr size_t kChunk = 1 << 20;

/// /proc/TID/mem of one task, open for the reads of one digest: read there, a page the task
/// shares copy-on-write with another process (a checkpoint, its own fork child) stays
/// shared. process_vm_readv pins the pages it reads, and since Linux 5.19 pinning a shared
/// anonymous page copies it for the task first ("unshare", mm/gup.c): a digest after each new
/// checkpoint copied the whole memory it read (three times the read's time, and the
/// checkpoint's memory no longer shared). Small reads (a stack window: two pages, hashed at
/// every pass of a candidate point) stay with process_vm_readv, one syscall instead of three.
/// -1 when not wanted or it cannot be opened: then process_vm_readv.
class MemFile {
 public:
  MemFile(pid_t tid, bool wanted)
      : fd_(wanted ? ::open(("/proc/" + std::to_string(tid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC)
                   : -1) {}
  ~MemFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  /// Reads up to `n` bytes at `addr` of task `tid` into `out`: the bytes read (as far as the
  /// first page that cannot be read), or -1 when none could be.
  ssize_t read(pid_t tid, uint64_t addr, uint8_t* out, size_t n) const {
    if (fd_ >= 0) return ::pread(fd_, out, n, off_t(addr));
    iovec local{out, n}, remote{reinterpret_cast<void*>(addr), n};
    return process_vm_readv(tid, &local, 1, &remote, 1, 0);
  }

 private:
  int fd_;
};

// Feeds [start, end) to the hash, chunk by chunk; pages that cannot be read (a file mapping
// past the end of its file) are hashed as absent, the same way in record and replay.
void hash_range(XXH3_state_t* st, pid_t tid, uint64_t start, uint64_t end,
                std::vector<uint8_t>& buf, const MemFile& mem) {
  for (uint64_t p = start; p < end;) {
    size_t n = size_t(std::min<uint64_t>(kChunk, end - p));
    ssize_t r = mem.read(tid, p, buf.data(), n);
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
using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

/// The parts of `ranges` ([lo, hi), sorted and disjoint) that a digest hashes, in the order
/// it hashes them: within each readable, writable, private mapping (not [vvar]/[vdso]), each
/// range's part, minus `sorted_ex` (the exclusions, sorted).
Ranges hashed_parts(const std::vector<ProcMapping>& maps, const DigestExclusions& sorted_ex,
                    const Ranges& ranges) {
  Ranges parts;
  for (const ProcMapping& m : maps) {
    if (!m.read || !m.write || m.shared || m.is_special()) continue;
    for (const auto& [lo, hi] : ranges) {
      uint64_t p = std::max(m.start, lo), end = std::min(m.end, hi);
      if (p >= end) continue;
      for (const auto& [a, len] : sorted_ex) {
        uint64_t b = a + len;
        if (b <= p || a >= end) continue;
        if (a > p) parts.emplace_back(p, a);
        p = std::max(p, b);
      }
      if (p < end) parts.emplace_back(p, end);
    }
  }
  return parts;
}

/// XXH3-128 of what digest_memory hashes, clipped to `ranges` (sorted and disjoint).
MemoryDigest digest_within(pid_t tid, const std::vector<ProcMapping>& maps,
                           const DigestExclusions& exclude, const Ranges& ranges, size_t chunk) {
  DigestExclusions ex = exclude;
  std::sort(ex.begin(), ex.end());
  XXH3_state_t* st = XXH3_createState();
  XXH3_128bits_reset(st);
  std::vector<uint8_t> buf(chunk);
  MemFile mem(tid, chunk >= kChunk);
  for (const auto& [p, end] : hashed_parts(maps, ex, ranges)) hash_range(st, tid, p, end, buf, mem);
  XXH128_hash_t h = XXH3_128bits_digest(st);
  XXH3_freeState(st);
  return {h.low64, h.high64};
}

/// `ranges` sorted, overlapping ones merged.
Ranges merged(Ranges ranges) {
  std::sort(ranges.begin(), ranges.end());
  Ranges out;
  for (const auto& r : ranges) {
    if (!out.empty() && r.first <= out.back().second)
      out.back().second = std::max(out.back().second, r.second);
    else
      out.push_back(r);
  }
  return out;
}

/// [v - below, v + above), clipped to the address space's ends.
std::pair<uint64_t, uint64_t> window(uint64_t v, uint64_t below, uint64_t above) {
  return {v > below ? v - below : 0, v > UINT64_MAX - above ? UINT64_MAX : v + above};
}

/// Whether `v` is an address inside a mapping that digests hash (maps sorted by start).
bool hashed_address(const std::vector<ProcMapping>& maps, uint64_t v) {
  auto it = std::upper_bound(maps.begin(), maps.end(), v,
                             [](uint64_t a, const ProcMapping& m) { return a < m.start; });
  if (it == maps.begin()) return false;
  const ProcMapping& m = *--it;
  return v < m.end && m.read && m.write && !m.shared && !m.is_special();
}
}  // namespace

MemoryDigest digest_memory(pid_t tid, const std::vector<ProcMapping>& maps,
                           const DigestExclusions& exclude) {
  return digest_within(tid, maps, exclude, {{0, UINT64_MAX}}, kChunk);
}

MemoryDigest digest_stack_window(pid_t tid, const std::vector<ProcMapping>& maps,
                                 const DigestExclusions& exclude, uint64_t rsp) {
  return digest_within(tid, maps, exclude, {window(rsp, kStackWindowBelow, kStackWindowAbove)},
                       kStackWindowBelow + kStackWindowAbove);
}

std::vector<uint64_t> point_stack_words(pid_t tid, const std::vector<ProcMapping>& maps,
                                        const DigestExclusions& exclude, uint64_t rsp) {
  if (!hashed_address(maps, rsp)) return {};
  const ProcMapping& m = *std::find_if(maps.begin(), maps.end(), [&](const ProcMapping& x) {
    return rsp >= x.start && rsp < x.end;
  });
  uint64_t end = std::min<uint64_t>(m.end, rsp + 8 * kPointStackWords);
  for (const auto& [a, n] : exclude)
    if (a < end && a + n > rsp) end = std::max(rsp, std::min(end, a));
  const size_t words = size_t((end - rsp) / 8);
  std::vector<uint8_t> bytes = read_memory(tid, rsp, 8 * words);
  if (bytes.size() != 8 * words) return {};
  std::vector<uint64_t> out(words);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

MemoryDigest digest_register_windows(pid_t tid, const std::vector<ProcMapping>& maps,
                                     const DigestExclusions& exclude, const Registers& regs) {
  const uint64_t values[] = {regs.rax, regs.rbx, regs.rcx, regs.rdx, regs.rsi,
                             regs.rdi, regs.rbp, regs.r8,  regs.r9,  regs.r10,
                             regs.r11, regs.r12, regs.r13, regs.r14, regs.r15};
  Ranges first;
  for (uint64_t v : values) first.push_back(window(v, kRegisterWindowBelow, kRegisterWindowAbove));
  // The stack window too: the frames below keep their callers' pointers there (an
  // interpreter's frame, saved by the C function it called).
  first.push_back(window(regs.rsp, kStackWindowBelow, kStackWindowAbove));
  DigestExclusions ex = exclude;
  std::sort(ex.begin(), ex.end());
  XXH3_state_t* st = XXH3_createState();
  XXH3_128bits_reset(st);
  // Level by level: the windows' bytes, then the windows around every aligned word of them
  // that points into hashed memory (the objects they point at: a frame's locals, an
  // iterator's index), and so on kPointerLevels deep. Each level's windows are read in one
  // process_vm_readv (IOV_MAX at a time), or one by one where some could not be read (then
  // nothing in them is followed).
  Ranges level = merged(first);
  std::vector<uint8_t> buf;
  for (size_t depth = 0; depth < kPointerLevels && !level.empty(); ++depth) {
    Ranges parts = hashed_parts(maps, ex, level), next;
    for (size_t i = 0; i < parts.size(); i += IOV_MAX) {
      size_t n = std::min<size_t>(IOV_MAX, parts.size() - i), total = 0;
      std::vector<iovec> remote(n);
      for (size_t k = 0; k < n; ++k) {
        const auto& [p, end] = parts[i + k];
        remote[k] = {reinterpret_cast<void*>(p), size_t(end - p)};
        total += size_t(end - p);
      }
      buf.resize(total);
      iovec local{buf.data(), total};
      if (process_vm_readv(tid, &local, 1, remote.data(), n, 0) != ssize_t(total)) {
        MemFile mem(tid, false);
        for (size_t k = 0; k < n; ++k)
          hash_range(st, tid, parts[i + k].first, parts[i + k].second, buf, mem);
        continue;
      }
      XXH3_128bits_update(st, buf.data(), total);
      if (depth + 1 == kPointerLevels) continue;
      size_t at = 0;
      for (size_t k = 0; k < n; ++k) {
        const auto& [p, end] = parts[i + k];
        for (uint64_t a = (p + 7) & ~uint64_t(7); a + 8 <= end; a += 8) {
          uint64_t w;
          memcpy(&w, buf.data() + at + (a - p), 8);
          if (next.size() < kPointedWindowsMax && hashed_address(maps, w))
            next.push_back(window(w, kPointedWindowBelow, kPointedWindowAbove));
        }
        at += size_t(end - p);
      }
    }
    level = merged(std::move(next));
  }
  XXH128_hash_t h = XXH3_128bits_digest(st);
  XXH3_freeState(st);
  return {h.low64, h.high64};
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
  MemFile mem(tid, true);
  DigestExclusions ex = exclude;
  std::sort(ex.begin(), ex.end());
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
    for (const auto& [p, end] : hashed_parts({m}, ex, {{0, UINT64_MAX}}))
      hash_range(st, tid, p, end, buf, mem);
    XXH128_hash_t h = XXH3_128bits_digest(st);
    XXH3_freeState(st);
    char line[256];
    snprintf(line, sizeof line, "%lx-%lx %s %016llx%016llx\n", (unsigned long)m.start,
             (unsigned long)m.end, m.path.c_str(), (unsigned long long)h.high64,
             (unsigned long long)h.low64);
    out += line;
  }
  return out;
}

}  // namespace rwd
