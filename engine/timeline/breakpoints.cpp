#include "engine/timeline/breakpoints.h"

#include "engine/errors.h"
#include "engine/os/tracee_memory.h"

namespace rwd {

namespace {
constexpr uint8_t kInt3 = 0xcc;

/// Writes bytes of code into one task's memory, for one change of the table: through its
/// /proc/PID/mem, opened at the first write and kept for the next ones (TraceeMemFile), since
/// code is read-only and write_memory's process_vm_writev fails there before every write. A
/// byte that write refuses (a shared mapping, which the kernel's forced write does not
/// break: proc(5)) goes through write_memory, whose process_vm_writev writes a writable one.
class CodeBytes {
 public:
  explicit CodeBytes(pid_t tid) : tid_(tid), mem_(tid) {}
  void write(uint64_t addr, uint8_t byte) {
    try {
      mem_.write(addr, &byte, 1);
    } catch (const SystemError&) {
      write_memory(tid_, addr, &byte, 1);
    }
  }

 private:
  pid_t tid_;
  TraceeMemFile mem_;
};
}  // namespace

void BreakpointTable::set(const CodeSite& site, uint8_t who, bool on) {
  auto it = wanted_.find(site);
  uint8_t was = it == wanted_.end() ? 0 : it->second;
  uint8_t now = on ? uint8_t(was | who) : uint8_t(was & ~who);
  if (now == was) return;
  if (now == 0)
    wanted_.erase(it);
  else
    wanted_[site] = now;
  resolved_.clear();
}

const std::map<uint64_t, bool>& BreakpointTable::addresses(pid_t pid) {
  pid_t k = key(pid);
  auto it = resolved_.find(k);
  if (it != resolved_.end()) return it->second;
  std::map<uint64_t, bool>& out = resolved_[k];
  static const std::vector<ProcMapping> kNone;
  const std::vector<ProcMapping>* maps = &kNone;
  bool by_file = false;
  for (const auto& [s, who] : wanted_) by_file |= !s.file.empty();
  if (by_file) {
    if (auto m = maps_.find(k); m != maps_.end()) {
      maps = &m->second;
    } else {
      try {
        maps = &(maps_[k] = read_proc_maps(pid));
      } catch (const Error&) {
        // The process is gone: its sites are nowhere.
      }
    }
  }
  for (const auto& [s, who] : wanted_)
    for (uint64_t a : site_addresses(*maps, s)) out[a] |= (who & kUser) != 0;
  return out;
}

bool BreakpointTable::empty() const {
  if (!wanted_.empty()) return false;
  for (const auto& [pid, patches] : patched_)
    if (!patches.empty()) return false;
  return true;
}

bool BreakpointTable::has(pid_t pid, uint64_t addr) {
  if (wanted_.empty()) return false;
  const auto& at = addresses(pid);
  auto it = at.find(addr);
  return it != at.end() && it->second;
}

bool BreakpointTable::kept_out(pid_t k, uint64_t addr) const {
  if (kept_out(addr)) return true;
  auto it = process_keep_out_.find(k);
  if (it == process_keep_out_.end()) return false;
  for (const auto& [lo, hi] : it->second)
    if (addr >= lo && addr < hi) return true;
  return false;
}

void BreakpointTable::sync(pid_t pid, pid_t tid) {
  const std::map<uint64_t, bool>& wanted = addresses(pid);
  pid_t k = key(pid);
  auto& mine = patched_[k];
  CodeBytes code(tid);
  for (auto it = mine.begin(); it != mine.end();) {
    if (wanted.count(it->first) && !kept_out(k, it->first)) {
      ++it;
      continue;
    }
    code.write(it->first, it->second);
    it = mine.erase(it);
  }
  for (const auto& [addr, user] : wanted) {
    if (mine.count(addr) || kept_out(k, addr)) continue;
    auto orig = read_memory(tid, addr, 1);
    if (orig.empty()) continue;  // not mapped yet: pending
    code.write(addr, kInt3);
    mine[addr] = orig[0];
  }
}

void BreakpointTable::unpatch(pid_t pid, pid_t tid) {
  auto p = patched_.find(key(pid));
  if (p == patched_.end()) return;
  CodeBytes code(tid);
  for (auto& [addr, orig] : p->second) code.write(addr, orig);
  patched_.erase(p);
}

void BreakpointTable::revalidate(pid_t pid, pid_t tid) {
  resolved_.erase(key(pid));
  maps_.erase(key(pid));
  auto p = patched_.find(key(pid));
  if (p == patched_.end()) return;
  for (auto it = p->second.begin(); it != p->second.end();) {
    auto now = read_memory(tid, it->first, 1);
    if (now.size() == 1 && now[0] == kInt3)
      ++it;
    else
      it = p->second.erase(it);
  }
}

void BreakpointTable::lift(pid_t pid, pid_t tid, uint64_t addr) {
  auto p = patched_.find(key(pid));
  if (p == patched_.end()) return;
  auto it = p->second.find(addr);
  if (it == p->second.end()) return;
  CodeBytes(tid).write(addr, it->second);
  p->second.erase(it);
}

bool BreakpointTable::patched(pid_t pid, uint64_t addr) const {
  auto p = patched_.find(key(pid));
  return p != patched_.end() && p->second.count(addr) != 0;
}

void BreakpointTable::hide(pid_t pid, uint64_t addr, std::vector<uint8_t>& bytes) const {
  auto p = patched_.find(key(pid));
  if (p == patched_.end()) return;
  for (auto it = p->second.lower_bound(addr);
       it != p->second.end() && it->first < addr + bytes.size(); ++it)
    bytes[it->first - addr] = it->second;
}

}  // namespace rwd
