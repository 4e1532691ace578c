// Where an asynchronous signal names its point (DESIGN.md "Ticks, preemption and asynchronous
// signals"): without counters, replay finds the point by a trampoline at its instruction that
// compares the registers in the task and stops only where they match, then compares the
// memory digest. A benchmark's loop that calls malloc and free and counts its passes in
// memory, or in a frame further up than the functions it calls, has the same registers at
// every pass of free's code, and the SIGALRM that ends it lands there nearly always: replay
// stopped at every pass, millions of them (tests/programs/alarm_in_calls.c: 200 ms of it did
// not replay in a minute). Before the signal is delivered, the recorder steps the task
// through a period of the loop and on beside it, to the first instruction whose registers
// differ from the period before (the load of the counter, say), and delivers it there, as
// the kernel may deliver a signal some instructions later. Loops longer than kMaxSteps
// (openssl speed's) are left as they were.
#include <cstddef>
#include <optional>
#include <vector>

#include "engine/os/proc.h"
#include "engine/record/record_session.h"
#include "engine/replay/point_trampoline.h"

namespace rwd {
namespace {

/// Instructions stepped at most to find a pass of the signal's instruction with the same
/// registers. A single step costs a debug exception, about 50 µs on a VM: this many and as
/// many again beside the period is about 0.2 s, spent only where the registers repeat or
/// the code does not come back to the instruction (a timer's next expiry waits as long:
/// RecordSession::hold_timer_expiry).
constexpr size_t kMaxSteps = 2048;

/// Passes of the instruction, each with registers unlike all those before, after which the
/// search takes them to change from pass to pass and names the point at the last one: a
/// loop that passes the instruction up to this many times a period with other registers
/// (free(3) called twice a pass) is still told apart.
constexpr size_t kChangingPasses = 3;

}  // namespace

std::optional<int> RecordSession::step_to_distinct_signal_point(RecordTask& t, Registers& regs,
                                                                int sig, const SigInfo& si) {
  const uint64_t x = regs.rip;
  std::vector<Registers> path{regs};  // the state after each step, from the signal's
  std::vector<size_t> passes{0};      // indices in path of the passes of x
  Registers r = regs;
  bool handled = false;
  int steps = 0;
  // The search stops where a step cannot be made (a syscall, the library's code): the point
  // is named there, as the hops of deliver_signal would have it.
  auto here = [&]() -> std::optional<int> {
    if (handled) return std::nullopt;
    regs = r;
    return steps;
  };
  // librewind_preload.so's code (its stubs, its buffered calls) runs otherwise in replay, and
  // a step there would run its syscall hook under the desched counter: the search ends at
  // its first instruction, where a signal that arrives there is delivered too.
  const auto [lib_lo, lib_hi] = preload_library_range(read_proc_maps(t.tid));
  auto in_library = [&](uint64_t rip) { return rip >= lib_lo && rip < lib_hi; };
  std::optional<size_t> period_start;  // where the lap began that the registers came back to
  while (path.size() <= kMaxSteps) {
    if (!step_for_point(t, r, handled, sig, &si)) return here();
    ++steps;
    if (in_library(r.rip)) return here();
    path.push_back(r);
    if (r.rip != x) continue;
    for (size_t i : passes)
      if (trampoline_compares_equal(r, path[i])) {
        period_start = i;
        break;
      }
    if (period_start) break;
    passes.push_back(path.size() - 1);
    if (passes.size() > kChangingPasses) return here();  // its registers change at each pass
  }
  if (!period_start) return here();  // no pass with the same registers in reach
  // t stands where it stood at path[*period_start], registers and all, one period later: on
  // beside that period to the first instruction whose registers differ from it there. If
  // none does within a period (a count kept by instructions that write memory only, an
  // `addq $1, count`), no instruction of the loop tells its passes apart: here, as before.
  const size_t end = path.size() - 1;
  for (size_t j = *period_start + 1; j <= end; ++j) {
    if (!step_for_point(t, r, handled, sig, &si)) return here();
    ++steps;
    if (in_library(r.rip)) return here();
    if (r.rip != path[j].rip || !trampoline_compares_equal(r, path[j])) {
      if (r.rip == path[j].rip) ++moved_points_;
      break;
    }
  }
  return here();
}

}  // namespace rwd
