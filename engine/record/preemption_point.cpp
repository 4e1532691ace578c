// Where a preemption names its point (DESIGN.md "Ticks, preemption and asynchronous signals"):
// without counters, replay finds the point by a trampoline at its instruction that compares
// the registers in the task and stops only where they match, then compares the memory
// digest. In a loop whose state lives in memory only (a counter kept in a global, as code
// built without optimisation keeps it), the registers at the interrupted instruction are the
// same at every pass: replay would stop at every pass of the loop (millions in a time
// slice, each with a digest of the task's memory). The recorder steps the task through the
// loop first, to an instruction whose registers differ from one pass to the next.
#include <sys/wait.h>

#include <vector>

#include "engine/arch/displaced_code.h"
#include "engine/arch/insn.h"
#include "engine/arch/siginfo.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/record/record_session.h"
#include "engine/replay/point_trampoline.h"

namespace rwd {
namespace {

/// Instructions stepped to find the next pass of the interrupted instruction: a loop
/// longer than this is left as it is (its passes are fewer, and its registers vary more).
constexpr int kLapSteps = 64;

}  // namespace

bool RecordSession::step_for_point(RecordTask& t, Registers& r, bool& handled, int sig,
                                   const SigInfo* si) {
  if (t.buffer.must_not_stop_at(r.rip) || rep_insn_at(t.tid, r.rip)) return false;
  std::vector<uint8_t> code = read_memory(t.tid, r.rip, 16);
  if (step_kind(code.data(), code.size(), r.rip) == StepKind::None) return false;
  int st = step_insn_putting_off(t);
  ++point_steps_;
  if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP || (st >> 16) != 0 ||
      siginfo_code(get_siginfo(t.tid)) != TRAP_TRACE) {
    // It faulted (an emulated instruction), ended, or stopped for another reason: that
    // stop is handled, and the preemption waits for the next tick (the signal comes again
    // after it). Signals that came during the steps are sent again first.
    handled = true;
    if (sig) put_off_signal(t, sig, *si);
    send_put_off(t);
    handle_stop(t, st);
    return false;
  }
  r = get_regs(t.tid);
  return true;
}

bool RecordSession::step_to_distinct_point(RecordTask& t, Registers& regs) {
  auto step = [&](Registers& r, bool& handled) { return step_for_point(t, r, handled); };
  bool handled = false;
  const uint64_t x = regs.rip;
  // A single step costs a debug exception, a VM exit on a VM (tens of microseconds): only
  // where the code at x leads back to it within a lap (decoded, not run).
  std::vector<uint8_t> ahead = read_memory(t.tid, x, 15 * kLapSteps);
  if (!in_short_loop(ahead.data(), ahead.size(), x, kLapSteps)) return true;
  // The first lap: the states after each step, up to the next pass of x.
  std::vector<Registers> lap{regs};
  Registers r = regs;
  for (int i = 0; i < kLapSteps; ++i) {
    if (!step(r, handled)) {
      if (handled) return false;
      regs = r;
      return true;  // no loop, or one that makes a call this cannot step: here
    }
    if (r.rip == x) break;
    lap.push_back(r);
  }
  if (r.rip != x || !trampoline_compares_equal(r, regs)) {
    regs = r;  // not a short loop, or one whose registers change at x
    return true;
  }
  // The same registers at the next pass of x: a second lap, to the first instruction whose
  // registers differ from the first lap's there.
  for (size_t j = 1; j < lap.size(); ++j) {
    if (!step(r, handled)) {
      if (handled) return false;
      break;
    }
    if (r.rip != lap[j].rip || !trampoline_compares_equal(r, lap[j])) {
      if (r.rip == lap[j].rip) ++moved_points_;
      break;
    }
  }
  regs = r;
  return true;
}

}  // namespace rwd
