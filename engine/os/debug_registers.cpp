#include "debug_registers.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/errors.h"
#include "engine/os/machine_probes.h"
#include "engine/os/soft_debug_registers.h"

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

/// What the probe's child calls, with a breakpoint on it.
__attribute__((noinline)) void probe_target() {
  asm volatile("" ::: "memory");
}

/// Whether a slot-0 breakpoint stops a traced child at probe_target.
bool probe_hardware() {
  pid_t pid = fork();
  if (pid < 0) return true;  // cannot tell: assume the usual
  if (pid == 0) {
    ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
    raise(SIGSTOP);
    probe_target();
    _exit(0);
  }
  auto wait_child = [pid] {
    int st = 0;
    while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR) {
    }
    return st;
  };
  int st = wait_child();
  bool works = false;
  if (WIFSTOPPED(st)) {
    try {
      set_slot(pid, 0, uint64_t(reinterpret_cast<uintptr_t>(&probe_target)), 1, WatchKind::Execute);
      ptrace(PTRACE_CONT, pid, nullptr, nullptr);
      st = wait_child();
      works = WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP;
    } catch (const SystemError&) {
    }
  }
  if (!WIFEXITED(st) && !WIFSIGNALED(st)) {
    kill(pid, SIGKILL);
    wait_child();
  }
  return works;
}
}  // namespace

bool hardware_debug_registers() {
  static const bool works = [] {
    if (const char* e = getenv("REWIND_SOFT_DEBUG_REGISTERS"); e && *e) return strcmp(e, "1") != 0;
    return machine_probe("hardware_debug_registers", probe_hardware);
  }();
  return works;
}

void set_exec_breakpoint(pid_t tid, uint64_t addr) {
  if (!hardware_debug_registers()) return set_soft_slot(tid, 0, addr, 1, WatchKind::Execute);
  set_slot(tid, 0, addr, 1, WatchKind::Execute);
}

void clear_exec_breakpoint(pid_t tid) {
  if (!hardware_debug_registers()) return clear_soft_slot(tid, 0);
  clear_slot(tid, 0);
}

bool wide_watch(uint64_t addr, int len) {
  return (len != 1 && len != 2 && len != 4 && len != 8) || addr % uint64_t(len) != 0;
}

void set_watch_slot(pid_t tid, int slot, uint64_t addr, int len, WatchKind kind) {
  if (!hardware_debug_registers()) return set_soft_slot(tid, slot, addr, len, kind);
  if (wide_watch(addr, len)) {
    clear_slot(tid, slot);
    return set_soft_slot(tid, slot, addr, len, kind);
  }
  clear_soft_slot(tid, slot);
  set_slot(tid, slot, addr, len, kind);
}

void clear_watch_slot(pid_t tid, int slot) {
  clear_soft_slot(tid, slot);
  if (hardware_debug_registers()) clear_slot(tid, slot);
}

bool peek_debug_register(pid_t tid, int reg, uint64_t& value) {
  return peek(tid, reg, value);
}

long poke_debug_register(pid_t tid, int reg, uint64_t value) {
  return poke(tid, reg, value) == 0 ? 0 : -errno;
}

void set_single_step_status(pid_t tid) {
  poke(tid, 6, 1ull << 14);
}

uint64_t take_debug_status(pid_t tid) {
  // The kernel's DR6 holds the single-step bit even where the other slots are emulated; a
  // wide watch's software slot fires beside the CPU's.
  uint64_t dr6 = 0;
  if (peek(tid, 6, dr6) && dr6 != 0) poke(tid, 6, 0);  // (at an int3's stop it is 0 already)
  return dr6 | take_soft_status(tid);
}

}  // namespace rwd
