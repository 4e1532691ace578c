#include "remote_syscall.h"

#include <sys/ptrace.h>

#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"

namespace rwd {

int64_t RemoteSyscall::call(long nr, std::array<uint64_t, 6> a) {
  enter(nr, a);
  return finish(nr);
}

void RemoteSyscall::enter(long nr, std::array<uint64_t, 6> a) {
  Registers r = base_;
  r.rip = insn_;
  r.rax = uint64_t(nr);
  r.orig_rax = uint64_t(-1);
  r.rdi = a[0];
  r.rsi = a[1];
  r.rdx = a[2];
  r.r10 = a[3];
  r.r8 = a[4];
  r.r9 = a[5];
  set_regs(t_.tid, r);
  // Resuming from a PTRACE_SYSEMU stop with PTRACE_SYSCALL first reports the exit of the
  // emulated (skipped) syscall; the injected one's entry comes next.
  Stop s = run_to_stop(t_, PTRACE_SYSCALL);
  if (s.kind == Stop::SyscallExit) s = run_to_stop(t_, PTRACE_SYSCALL);
  if (s.kind != Stop::SyscallEntry)
    throw DivergenceError("task " + std::to_string(t_.rec_tid) + " did not enter " +
                          syscall_name(nr) + " when rewind ran it (stop kind " +
                          std::to_string(int(s.kind)) + ", signal " + std::to_string(s.sig) +
                          ")");
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
