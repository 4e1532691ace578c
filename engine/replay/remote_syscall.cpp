#include "remote_syscall.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

std::atomic<uint64_t> by_trap{0}, by_stops{0};

/// Whether SIGTRAP may be ignored in some replayed process: set for good once a replayed
/// program sets its action to SIG_IGN (rt_sigaction runs for real in replay, always through
/// RemoteSyscall), or when rewind itself ignores SIGTRAP (its processes would start so). An
/// int3 then must not be used: the kernel resets an ignored or blocked SIGTRAP's action to
/// SIG_DFL when it forces the trap's signal (force_sig_info_to_task in kernel/signal.c),
/// which the program could read back; a handler or SIG_DFL it leaves alone.
std::atomic<bool>& trap_may_be_ignored() {
  static std::atomic<bool> ignored{[] {
    struct sigaction now {};
    return sigaction(SIGTRAP, nullptr, &now) != 0 || now.sa_handler == SIG_IGN;
  }()};
  return ignored;
}

/// `base` with rip at `insn` and syscall `nr`'s number and arguments in place (the syscall
/// ABI: rax, then rdi, rsi, rdx, r10, r8, r9); orig_rax -1, so no restart applies.
Registers call_registers(const Registers& base, uint64_t insn, long nr,
                         const std::array<uint64_t, 6>& a) {
  Registers r = base;
  r.rip = insn;
  r.rax = uint64_t(nr);
  r.orig_rax = uint64_t(-1);
  r.rdi = a[0];
  r.rsi = a[1];
  r.rdx = a[2];
  r.r10 = a[3];
  r.r8 = a[4];
  r.r9 = a[5];
  return r;
}

/// Holds the task's signals back while rewind runs a syscall of its own in it: a signal the
/// kernel holds for the program (its own abort()'s SIGABRT, sent by a tgkill replay made for
/// real) would otherwise be delivered at the injected call's resume, a stop the call does not
/// expect, and at a point the recording did not have it. All signals but SIGTRAP (the trap
/// path's own: blocking it would reset a handler, kernel/signal.c) are blocked with
/// PTRACE_SETSIGMASK (ptrace(2)) for the life of the object, and the task's mask is set back
/// after. Not for calls that set the mask themselves, create, replace or end tasks (a child
/// would inherit the held mask) or return through a signal frame.
class SignalsHeld {
 public:
  SignalsHeld(ReplayTask& t, long nr) : t_(t) {
    if (syscall_has(nr, kSetsSignalMask) || syscall_has(nr, kForkLike) || syscall_has(nr, kExec) ||
        syscall_has(nr, kExit) || nr == SYS_rt_sigreturn)
      return;
    const std::optional<uint64_t> known = current_sigmask(t);
    if (!known) return;
    const uint64_t trap = signal_bit(SIGTRAP);
    // As the kernel keeps it: SIGKILL and SIGSTOP are never blocked (sigprocmask(2)).
    const uint64_t held = (~trap | (*known & trap)) & ~(signal_bit(SIGKILL) | signal_bit(SIGSTOP));
    if (held == *known || !try_set_sigmask(t.tid, held)) return;
    saved_ = *known;
    t.blocked = held;  // the task's mask now (call_by_trap reads it)
  }
  ~SignalsHeld() {
    if (!saved_) return;
    try {
      if (try_set_sigmask(t_.tid, *saved_)) {
        t_.blocked = saved_;
        t_.blocked_at = resumes_so_far();
        return;
      }
    } catch (...) {
      // The task is gone.
    }
    t_.blocked.reset();
  }
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  ReplayTask& t_;
  std::optional<uint64_t> saved_;  ///< the mask to set back; nullopt when none was changed
};

}  // namespace

uint64_t RemoteSyscall::calls_by_trap() {
  return by_trap.load(std::memory_order_relaxed);
}
uint64_t RemoteSyscall::calls_by_stops() {
  return by_stops.load(std::memory_order_relaxed);
}

int64_t RemoteSyscall::call(long nr, std::array<uint64_t, 6> a) {
  SignalsHeld held(t_, nr);
  if (std::optional<int64_t> r = call_by_trap(nr, a)) return *r;
  by_stops.fetch_add(1, std::memory_order_relaxed);
  enter(nr, a);
  return finish(nr);
}

std::optional<int64_t> RemoteSyscall::call_by_trap(long nr, const std::array<uint64_t, 6>& a) {
  if (nr == SYS_rt_sigaction && a[0] == SIGTRAP && a[1] != 0) {
    // The new action's handler comes first in the kernel's struct sigaction.
    uint64_t handler = uint64_t(SIG_IGN);
    std::vector<uint8_t> b = read_memory(t_.tid, a[1], sizeof handler);
    if (b.size() == sizeof handler) std::memcpy(&handler, b.data(), sizeof handler);
    if (handler == uint64_t(SIG_IGN)) trap_may_be_ignored() = true;
  }
  // Not where the task goes on elsewhere than after the syscall: a new task, a new image,
  // an end, or rt_sigreturn's registers from the signal frame (it never reaches the int3).
  if (trap_may_be_ignored() || syscall_has(nr, kForkLike) || syscall_has(nr, kExec) ||
      syscall_has(nr, kExit) || nr == SYS_rt_sigreturn)
    return std::nullopt;
  const std::optional<uint64_t> known = current_sigmask(t_);  // kept for the resume too
  if (!known || (*known & signal_bit(SIGTRAP))) return std::nullopt;
  const uint64_t site = trap_site(nr, a);
  if (!site) return std::nullopt;
  const uint64_t mask = *known;
  set_regs(t_.tid, call_registers(base_, site, nr, a));
  // From a PTRACE_SYSEMU entry stop, PTRACE_CONT reports no exit of the skipped syscall (the
  // kernel reports one only when the resume asks for syscall stops): the next stop is the
  // int3's, after the syscall ran.
  last_ = run_to_stop(t_, PTRACE_CONT);
  if (last_.kind == Stop::Exited) return 0;
  const Registers after = get_regs(t_.tid);
  if (last_.kind != Stop::Signal || last_.sig != SIGTRAP || after.rip != site + 3)
    throw DivergenceError("task " + std::to_string(t_.rec_tid) + " did not finish " +
                          syscall_name(nr) + " when rewind ran it (stop kind " +
                          std::to_string(int(last_.kind)) + ", signal " +
                          std::to_string(last_.sig) + ")");
  // Only the syscall ran: the mask is the one before unless the syscall sets one.
  if (!syscall_has(nr, kSetsSignalMask)) {
    t_.blocked = mask;
    t_.blocked_at = resumes_so_far();
  }
  by_trap.fetch_add(1, std::memory_order_relaxed);
  return int64_t(after.rax);
}

namespace {
/// Whether syscall `nr` with arguments `a` may map, unmap or reprotect the page of `addr`
/// (mmap(2), munmap(2), mremap(2), mprotect(2), madvise(2): MADV_DONTNEED gives a private
/// file page its file's bytes back): an int3 there could be lost or stop executing.
bool may_touch_page(long nr, const std::array<uint64_t, 6>& a, uint64_t addr) {
  const uint64_t page = addr & ~uint64_t(4095);
  auto covers = [&](uint64_t start, uint64_t len) {
    return start <= page + 4095 && page < start + std::max<uint64_t>(len, 1);
  };
  switch (nr) {
    case SYS_mmap:  // without MAP_FIXED the kernel never replaces a mapping
      return (a[3] & (MAP_FIXED | MAP_FIXED_NOREPLACE)) && covers(a[0], a[1]);
    case SYS_mremap:
      return covers(a[0], a[1]) || ((a[3] & MREMAP_FIXED) && covers(a[4], a[2]));
    case SYS_munmap:
    case SYS_mprotect:
    case SYS_pkey_mprotect:
    case SYS_madvise:
      return covers(a[0], a[1]);
    default:  // others that change mappings (shmat, shmdt...): anywhere
      return syscall_has(nr, kChangesMappings) || nr == SYS_process_madvise;
  }
}
}  // namespace

uint64_t RemoteSyscall::trap_site(long nr, const std::array<uint64_t, 6>& a) {
  static constexpr uint8_t kStub[] = {0x0f, 0x05, 0xcc};  // syscall; int3
  // The library's stub, in processes whose library maps it (older libraries do not).
  if (t_.syscall_buffer) {
    std::vector<uint8_t> code = read_memory(t_.tid, RWD_TRAP_SYSCALL_INSN, sizeof kStub);
    if (code.size() == sizeof kStub && std::memcmp(code.data(), kStub, sizeof kStub) == 0)
      return RWD_TRAP_SYSCALL_INSN;
  }
  if (may_touch_page(nr, a, insn_ + 2)) {
    drop_int3();
    return 0;
  }
  if (int3_) return insn_;
  std::vector<uint8_t> code = read_memory(t_.tid, insn_, sizeof kStub);
  if (code.size() != sizeof kStub || code[0] != kStub[0] || code[1] != kStub[1]) return 0;
  if (code[2] == kStub[2]) return insn_;  // already there (exec_restore's page and entry)
  errno = 0;
  const long word = ptrace(PTRACE_PEEKTEXT, t_.tid, insn_ + 2, nullptr);
  if (errno) return 0;
  if (ptrace(PTRACE_POKETEXT, t_.tid, insn_ + 2, (word & ~0xffL) | 0xcc) != 0) return 0;
  int3_ = true;
  int3_byte_ = uint8_t(word & 0xff);
  return insn_;
}

void RemoteSyscall::drop_int3() noexcept {
  if (!int3_) return;
  int3_ = false;
  // Only where the int3 still stands (the task may have ended).
  errno = 0;
  const long now = ptrace(PTRACE_PEEKTEXT, t_.tid, insn_ + 2, nullptr);
  if (errno == 0 && (now & 0xff) == 0xcc)
    ptrace(PTRACE_POKETEXT, t_.tid, insn_ + 2, (now & ~0xffL) | int3_byte_);
}

void RemoteSyscall::enter(long nr, std::array<uint64_t, 6> a) {
  set_regs(t_.tid, call_registers(base_, insn_, nr, a));
  // Resuming from a PTRACE_SYSEMU stop with PTRACE_SYSCALL first reports the exit of the
  // emulated (skipped) syscall; the injected one's entry comes next.
  Stop s = run_to_stop(t_, PTRACE_SYSCALL);
  if (s.kind == Stop::SyscallExit) s = run_to_stop(t_, PTRACE_SYSCALL);
  if (s.kind != Stop::SyscallEntry)
    throw DivergenceError("task " + std::to_string(t_.rec_tid) + " did not enter " +
                          syscall_name(nr) + " when rewind ran it (stop kind " +
                          std::to_string(int(s.kind)) + ", signal " + std::to_string(s.sig) + ")");
}

int64_t RemoteSyscall::finish(long nr) {
  last_ = run_to_stop(t_, PTRACE_SYSCALL);
  if (last_.kind == Stop::Event || last_.kind == Stop::Exited) return 0;
  if (last_.kind != Stop::SyscallExit)
    throw DivergenceError("task " + std::to_string(t_.rec_tid) + " did not finish " +
                          syscall_name(nr) + " when rewind ran it");
  return int64_t(get_regs(t_.tid).rax);
}

uint64_t find_syscall_insn(pid_t tid) {
  constexpr uint64_t kLook = 1 << 20;  // of each mapping, the first bytes searched
  std::vector<ProcMapping> maps = read_proc_maps_now(tid);
  std::stable_partition(maps.begin(), maps.end(),
                        [](const ProcMapping& m) { return m.path == "[vdso]"; });
  for (const ProcMapping& m : maps) {
    if (!m.exec || m.path == "[vsyscall]") continue;  // (vsyscall pages cannot be run in)
    std::vector<uint8_t> code = read_memory(tid, m.start, std::min(m.end - m.start, kLook));
    for (size_t i = 0; i + 1 < code.size(); ++i)
      if (code[i] == 0x0f && code[i + 1] == 0x05) return m.start + i;
  }
  return 0;
}

}  // namespace rwd
