#include "trampoline_install.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/replay/remote_syscall.h"

namespace rwd {

int64_t TrampolineInstall::run_syscall(long nr, std::array<uint64_t, 6> args) {
  ReplayTask& t = *t_;
  Registers saved = get_regs(t.tid);
  // The injected syscall's resumes must not deliver the program's pending signal or restart
  // its interrupted syscall: those belong to the program's next resume.
  ProgramResumeKept pending(t);
  const uint8_t syscall_insn[2] = {0x0f, 0x05};
  std::vector<uint8_t> borrowed = read_memory(t.tid, plan_.point, 2);
  write_memory(t.tid, plan_.point, syscall_insn, 2);
  int64_t r = 0;
  try {
    RemoteSyscall rs(t, plan_.point, saved);
    r = rs.call(nr, args);
  } catch (...) {
    write_memory(t.tid, plan_.point, borrowed.data(), borrowed.size());
    throw;
  }
  write_memory(t.tid, plan_.point, borrowed.data(), borrowed.size());
  set_regs(t.tid, saved);
  return r;
}

bool TrampolineInstall::install(ReplayTask& t, const PointTrampoline& plan) {
  t_ = &t;
  plan_ = plan;
  original_ = read_memory(t.tid, plan.point, plan.patch.size());
  if (original_.size() != plan.patch.size()) return false;
  int64_t r =
      run_syscall(SYS_mmap, {plan.map_start, plan.map_len, PROT_READ | PROT_WRITE | PROT_EXEC,
                             MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, uint64_t(-1), 0});
  if (r != int64_t(plan.map_start)) {
    // A kernel older than 4.17 takes MAP_FIXED_NOREPLACE for a hint and maps elsewhere.
    if (r > 0 && uint64_t(r) < (1ull << 47)) run_syscall(SYS_munmap, {uint64_t(r), plan.map_len});
    return false;
  }
  mapped_ = true;
  write_memory(t.tid, plan.addr, plan.code.data(), plan.code.size());
  if (!plan.data.empty()) write_memory(t.tid, plan.data_addr, plan.data.data(), plan.data.size());
  write_memory(t.tid, plan.point, plan.patch.data(), plan.patch.size());
  patched_ = true;
  return true;
}

void TrampolineInstall::restore_code() noexcept {
  if (!patched_) return;
  patched_ = false;
  try {
    // Only where the patch still stands: code the program wrote there since is its own.
    if (read_memory(t_->tid, plan_.point, plan_.patch.size()) == plan_.patch)
      write_memory(t_->tid, plan_.point, original_.data(), original_.size());
  } catch (...) {
    // The task is gone: nothing left to restore.
  }
}

void TrampolineInstall::remove() {
  restore_code();
  if (!mapped_) return;
  mapped_ = false;
  run_syscall(SYS_munmap, {plan_.map_start, plan_.map_len});
}

}  // namespace rwd
