#include "remote_syscall.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

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

/// Whether SIGTRAP's action may differ from the default and a handler in some replayed
/// process: set for good once a replayed program changes it (rt_sigaction runs for real in
/// replay, always through RemoteSyscall), or when rewind itself ignores SIGTRAP (its
/// processes would start so). An int3 then must not be used: the kernel resets an ignored
/// or blocked SIGTRAP's action to SIG_DFL when it forces the trap's signal
/// (force_sig_info_to_task in kernel/signal.c), which the program could read back.
std::atomic<bool>& trap_action_changed() {
  static std::atomic<bool> changed{[] {
    struct sigaction now {};
    return sigaction(SIGTRAP, nullptr, &now) != 0 || now.sa_handler == SIG_IGN;
  }()};
  return changed;
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

}  // namespace

uint64_t RemoteSyscall::calls_by_trap() {
  return by_trap.load(std::memory_order_relaxed);
}
uint64_t RemoteSyscall::calls_by_stops() {
  return by_stops.load(std::memory_order_relaxed);
}

int64_t RemoteSyscall::call(long nr, std::array<uint64_t, 6> a) {
  if (std::optional<int64_t> r = call_by_trap(nr, a)) return *r;
  by_stops.fetch_add(1, std::memory_order_relaxed);
  enter(nr, a);
  return finish(nr);
}

std::optional<int64_t> RemoteSyscall::call_by_trap(long nr, const std::array<uint64_t, 6>& a) {
  if (nr == SYS_rt_sigaction && a[0] == SIGTRAP && a[1] != 0) trap_action_changed() = true;
  // Not where the task goes on elsewhere than after the syscall: a new task, a new image,
  // an end, or rt_sigreturn's registers from the signal frame (it never reaches the int3).
  if (trap_action_changed() || syscall_has(nr, kForkLike) || syscall_has(nr, kExec) ||
      syscall_has(nr, kExit) || nr == SYS_rt_sigreturn || !t_.syscall_buffer)
    return std::nullopt;
  // The stub is there in processes whose library maps it (older libraries do not).
  static constexpr uint8_t kStub[] = {0x0f, 0x05, 0xcc};  // syscall; int3
  std::vector<uint8_t> code = read_memory(t_.tid, RWD_TRAP_SYSCALL_INSN, sizeof kStub);
  if (code.size() != sizeof kStub || std::memcmp(code.data(), kStub, sizeof kStub) != 0)
    return std::nullopt;
  const std::optional<uint64_t> known = current_sigmask(t_);  // kept for the resume too
  if (!known || (*known & signal_bit(SIGTRAP))) return std::nullopt;
  const uint64_t mask = *known;
  set_regs(t_.tid, call_registers(base_, RWD_TRAP_SYSCALL_INSN, nr, a));
  // From a PTRACE_SYSEMU entry stop, PTRACE_CONT reports no exit of the skipped syscall (the
  // kernel reports one only when the resume asks for syscall stops): the next stop is the
  // int3's, after the syscall ran.
  last_ = run_to_stop(t_, PTRACE_CONT);
  if (last_.kind == Stop::Exited) return 0;
  const Registers after = get_regs(t_.tid);
  if (last_.kind != Stop::Signal || last_.sig != SIGTRAP ||
      after.rip != RWD_TRAP_SYSCALL_INSN + sizeof kStub)
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

}  // namespace rwd
