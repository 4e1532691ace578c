// Software debug registers (soft_debug_registers.h).
#include "engine/os/soft_debug_registers.h"

#include <sys/ptrace.h>
#include <sys/user.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

#include "engine/errors.h"
#include "engine/os/tracee_memory.h"

namespace rwd {

namespace {

struct SoftSlot {
  bool armed = false;
  uint64_t addr = 0;
  int len = 0;
  WatchKind kind = WatchKind::Execute;
  std::vector<uint8_t> value;  ///< a write slot's bytes as last seen
};

struct SoftRegisters {
  std::array<SoftSlot, 4> slots;
  uint64_t dr6 = 0;
  bool any() const {
    for (const SoftSlot& s : slots)
      if (s.armed) return true;
    return false;
  }
};

std::mutex mu;
std::map<pid_t, SoftRegisters> threads;  // by tid; a thread without slots has none

/// The bytes at `addr`, or an empty vector when they cannot be read (unmapped).
std::vector<uint8_t> bytes_at(pid_t tid, uint64_t addr, int len) {
  std::vector<uint8_t> v = read_memory(tid, addr, size_t(len));
  if (v.size() != size_t(len)) v.clear();
  return v;
}

}  // namespace

void set_soft_slot(pid_t tid, int slot, uint64_t addr, int len, WatchKind kind) {
  if (kind == WatchKind::ReadWrite)
    throw Error(
        "a watchpoint on reads needs the CPU's debug registers, which this machine does not "
        "give to programs (a paravirtualised guest); watchpoints on writes work");
  SoftSlot s;
  s.armed = true;
  s.addr = addr;
  s.len = len;
  s.kind = kind;
  if (kind == WatchKind::Write) s.value = bytes_at(tid, addr, len);
  std::lock_guard<std::mutex> lock(mu);
  threads[tid].slots[size_t(slot)] = std::move(s);
}

void clear_soft_slot(pid_t tid, int slot) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = threads.find(tid);
  if (it == threads.end()) return;
  it->second.slots[size_t(slot)] = SoftSlot{};
  if (!it->second.any() && it->second.dr6 == 0) threads.erase(it);
}

uint64_t take_soft_status(pid_t tid) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = threads.find(tid);
  if (it == threads.end()) return 0;
  uint64_t dr6 = it->second.dr6;
  it->second.dr6 = 0;
  if (!it->second.any()) threads.erase(it);
  return dr6;
}

bool soft_debug_armed(pid_t tid) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = threads.find(tid);
  return it != threads.end() && it->second.any();
}

bool soft_debug_note_write(pid_t tid, uint64_t addr, uint64_t len) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = threads.find(tid);
  if (it == threads.end()) return false;
  bool fired = false;
  for (size_t i = 0; i < it->second.slots.size(); ++i) {
    const SoftSlot& s = it->second.slots[i];
    if (!s.armed || s.kind == WatchKind::Execute) continue;
    if (addr < s.addr + uint64_t(s.len) && s.addr < addr + len) {
      it->second.dr6 |= 1ull << i;
      fired = true;
    }
  }
  return fired;
}

std::vector<SoftWatchRange> soft_write_ranges(pid_t tid) {
  std::vector<SoftWatchRange> out;
  std::lock_guard<std::mutex> lock(mu);
  auto it = threads.find(tid);
  if (it == threads.end()) return out;
  for (const SoftSlot& s : it->second.slots)
    if (s.armed && s.kind == WatchKind::Write) out.push_back({s.addr, s.len});
  return out;
}

std::optional<uint64_t> soft_exec_address(pid_t tid) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = threads.find(tid);
  if (it == threads.end()) return std::nullopt;
  for (const SoftSlot& s : it->second.slots)
    if (s.armed && s.kind == WatchKind::Execute) return s.addr;
  return std::nullopt;
}

void soft_debug_resync(pid_t tid) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = threads.find(tid);
  if (it == threads.end()) return;
  for (SoftSlot& s : it->second.slots)
    if (s.armed && s.kind == WatchKind::Write) s.value = bytes_at(tid, s.addr, s.len);
}

bool soft_debug_after_step(pid_t tid, uint64_t rip, bool own_step) {
  if (own_step) {
    // The kernel's DR6.BS for rewind's own step: the CPU would report none for a continue.
    // The bits of the CPU's own slots stay (a wide watch runs beside them).
    constexpr uint64_t kSingleStep = 1ull << 14;
    long dr6_at = long(offsetof(struct user, u_debugreg) + 6 * sizeof(long));
    errno = 0;
    long dr6 = ptrace(PTRACE_PEEKUSER, tid, dr6_at, nullptr);
    if (errno == 0 && (uint64_t(dr6) & kSingleStep))
      ptrace(PTRACE_POKEUSER, tid, dr6_at, uint64_t(dr6) & ~kSingleStep);
  }
  std::lock_guard<std::mutex> lock(mu);
  auto it = threads.find(tid);
  if (it == threads.end()) return false;
  bool fired = false;
  for (size_t i = 0; i < it->second.slots.size(); ++i) {
    SoftSlot& s = it->second.slots[i];
    if (!s.armed) continue;
    bool hit = false;
    if (s.kind == WatchKind::Execute) {
      hit = own_step && rip == s.addr;
    } else {
      std::vector<uint8_t> now = bytes_at(tid, s.addr, s.len);
      hit = now != s.value;
      s.value = std::move(now);
    }
    if (hit) {
      it->second.dr6 |= 1ull << i;
      fired = true;
    }
  }
  return fired;
}

}  // namespace rwd
