#include "debug_registers.h"

#include <sys/ptrace.h>
#include <sys/user.h>

#include <cerrno>
#include <cstddef>
#include <string>

#include "engine/errors.h"

namespace rwd {

namespace {
long dr_offset(int reg) {
  return long(offsetof(struct user, u_debugreg) + reg * sizeof(long));
}

long poke(pid_t tid, int reg, uint64_t v) {
  return ptrace(PTRACE_POKEUSER, tid, dr_offset(reg), v);
}

bool peek(pid_t tid, int reg, uint64_t& out) {
  errno = 0;
  long v = ptrace(PTRACE_PEEKUSER, tid, dr_offset(reg), nullptr);
  if (errno != 0) return false;
  out = uint64_t(v);
  return true;
}

/// DR7 with slot `slot` set to enabled/kind/len (L bit 2*slot; R/W and LEN at 16 + 4*slot).
uint64_t dr7_with(uint64_t dr7, int slot, bool enabled, WatchKind kind, int len) {
  uint64_t enable = 1ull << (2 * slot), control = 0xfull << (16 + 4 * slot);
  dr7 &= ~(enable | control);
  if (!enabled) return dr7;
  uint64_t len_bits = len == 1 ? 0 : len == 2 ? 1 : len == 8 ? 2 : 3;  // LEN encoding
  return dr7 | enable | ((uint64_t(kind) | (len_bits << 2)) << (16 + 4 * slot));
}

void set_slot(pid_t tid, int slot, uint64_t addr, int len, WatchKind kind) {
  uint64_t dr7 = 0;
  if (!peek(tid, 7, dr7)) throw_errno("read the debug registers of task " + std::to_string(tid));
  // Disable the slot while its address changes, then enable it with the new address.
  if (poke(tid, 7, dr7_with(dr7, slot, false, kind, len)) != 0 || poke(tid, slot, addr) != 0 ||
      poke(tid, 7, dr7_with(dr7, slot, true, kind, len)) != 0)
    throw_errno("set a hardware breakpoint in task " + std::to_string(tid));
}

void clear_slot(pid_t tid, int slot) {
  uint64_t dr7 = 0;
  if (!peek(tid, 7, dr7)) return;
  poke(tid, 7, dr7_with(dr7, slot, false, WatchKind::Execute, 1));
}
}  // namespace

void set_exec_breakpoint(pid_t tid, uint64_t addr) {
  set_slot(tid, 0, addr, 1, WatchKind::Execute);
}

void clear_exec_breakpoint(pid_t tid) {
  clear_slot(tid, 0);
}

void set_watch_slot(pid_t tid, int slot, uint64_t addr, int len, WatchKind kind) {
  set_slot(tid, slot, addr, len, kind);
}

void clear_watch_slot(pid_t tid, int slot) {
  clear_slot(tid, slot);
}

uint64_t take_debug_status(pid_t tid) {
  uint64_t dr6 = 0;
  if (!peek(tid, 6, dr6)) return 0;
  poke(tid, 6, 0);
  return dr6;
}

}  // namespace rwd
