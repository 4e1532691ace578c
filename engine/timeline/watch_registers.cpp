// Arming the x86 debug registers of each replayed task for the debugger's watchpoints
// (watch_registers.h; the register encoding: engine/os/debug_registers.h).
#include "engine/timeline/watch_registers.h"

#include <algorithm>

#include "engine/os/tracee_memory.h"

namespace rwd {

bool WatchRegisters::add(uint64_t addr, int len, WatchKind kind) {
  if (len <= 0 || len > kMaxWatchBytes) return false;
  if (wide_watch(addr, len) && kind != WatchKind::Write) return false;
  for (int slot = 1; slot <= kWatchSlots; ++slot) {
    if (std::any_of(watches_.begin(), watches_.end(),
                    [&](const Watch& w) { return w.slot == slot; }))
      continue;
    Watch w;
    w.addr = addr;
    w.len = len;
    w.kind = kind;
    w.slot = slot;
    watches_.push_back(w);
    ++version_;
    return true;
  }
  return false;
}

void WatchRegisters::remove(uint64_t addr, int len, WatchKind kind) {
  ++version_;
  std::erase_if(watches_,
                [&](const Watch& w) { return w.addr == addr && w.len == len && w.kind == kind; });
}

void WatchRegisters::arm(pid_t tid) {
  for (auto& w : watches_)
    if (w.last.empty()) w.last = read_memory(tid, w.addr, size_t(w.len));
  uint64_t& armed = armed_[tid];
  if (armed == version_) return;
  armed = version_;
  for (int slot = 1; slot <= kWatchSlots; ++slot) {
    const Watch* w = nullptr;
    for (auto& x : watches_)
      if (x.slot == slot) w = &x;
    if (w)
      set_watch_slot(tid, slot, w->addr, w->len, w->kind);
    else
      clear_watch_slot(tid, slot);
  }
}

bool WatchRegisters::in_software() const {
  if (!hardware_debug_registers()) return !watches_.empty();
  return std::any_of(watches_.begin(), watches_.end(),
                     [](const Watch& w) { return wide_watch(w.addr, w.len); });
}

void WatchRegisters::restart() {
  for (auto& w : watches_) w.last.clear();
  armed_.clear();
}

}  // namespace rwd
