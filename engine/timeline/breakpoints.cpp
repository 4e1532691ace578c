#include "engine/timeline/breakpoints.h"

#include "engine/os/tracee_memory.h"

namespace rwd {

namespace {
constexpr uint8_t kInt3 = 0xcc;
}

void BreakpointTable::sync(pid_t pid, pid_t tid) {
  auto& mine = patched_[key(pid)];
  for (auto it = mine.begin(); it != mine.end();) {
    if (wanted_.count(it->first)) {
      ++it;
      continue;
    }
    write_memory(tid, it->first, &it->second, 1);
    it = mine.erase(it);
  }
  for (uint64_t addr : wanted_) {
    if (mine.count(addr)) continue;
    auto orig = read_memory(tid, addr, 1);
    if (orig.empty()) continue;  // not mapped yet: pending
    write_memory(tid, addr, &kInt3, 1);
    mine[addr] = orig[0];
  }
}

void BreakpointTable::unpatch(pid_t pid, pid_t tid) {
  auto p = patched_.find(key(pid));
  if (p == patched_.end()) return;
  for (auto& [addr, orig] : p->second) write_memory(tid, addr, &orig, 1);
  patched_.erase(p);
}

void BreakpointTable::revalidate(pid_t pid, pid_t tid) {
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
  write_memory(tid, addr, &it->second, 1);
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
