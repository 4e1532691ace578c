#include "pass_trap.h"

#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"

namespace rwd {

bool PassTrap::install(ReplayTask& t, uint64_t x, const std::vector<uint8_t>& code,
                       const Registers& want, PassChecks checks, uint64_t reach) {
  auto plan = plan_point_trampoline(PatchKind::Count, code, x, want, read_proc_maps(t.pid),
                                    proc_brk_start(t.pid), checks);
  if (!plan || plan->patch.size() > reach || !install_.install(t, *plan)) return false;
  installed_ = true;
  pid_ = t.pid;
  return true;
}

PassTrap::Trap PassTrap::classify(uint64_t rip, uint64_t& go_on) const {
  if (!installed_) return Trap::None;
  const PointTrampoline& p = install_.plan();
  go_on = p.resume;
  if (p.match_trap && rip == p.match_trap) return Trap::Match;
  if (p.count_trap && rip == p.count_trap) return Trap::Count;
  if (rip > p.point + 1 && rip <= p.point + p.patch.size()) {
    // An int3 of the patch after the jump's first byte: nothing ran there yet.
    if (auto to = moved_copy(p, rip - 1)) {
      go_on = *to;
      return Trap::Entered;
    }
  }
  return Trap::None;
}

uint64_t PassTrap::passes(pid_t tid) const {
  uint64_t n = 0;
  read_memory_exact(tid, install_.plan().count_addr, &n, sizeof n);
  return n;
}

void PassTrap::remove() {
  if (!installed_) return;
  installed_ = false;
  install_.remove();
}

void PassTrap::abandon() {
  installed_ = false;
  install_.abandon();
}

}  // namespace rwd
