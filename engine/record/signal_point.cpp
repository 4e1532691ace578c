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
// (openssl speed's SHA-256 of 256 bytes and more) are left as they were.
#include <algorithm>
#include <cstddef>
#include <cstdint>
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

/// Instructions those passes must span as well (about 3 ms). An inner loop's passes differ
/// (a pointer and a length that step), but the loop around it may call it again with the
/// same arguments, and the same registers come back at every call: openssl speed's SIGALRM
/// lands in OPENSSL_cleanse's 12-pass loop. The search steps through the rest of such a loop
/// when it is this short; a loop whose registers change for this many steps is taken to
/// change, as before. The cost, for tests/programs/timer_flood.c's compute loop under a 1 ms
/// timer: 66 steps a signal where 3 passes took 33, and as expiries are held for as long as
/// a delivery took, its handler ran 81 times, not 176 (256 steps: 31 times); the recording
/// took as long.
constexpr size_t kChangingSteps = 64;

/// A gap between two passes at least this many times the shortest one, and this many steps
/// longer, means the task left the loop and came back (an inner loop called again): its
/// passes are no evidence of registers that change, and the search goes on to kMaxSteps for
/// the pass that repeats. A loop with a rare long branch is stepped as far (0.1 s a signal).
constexpr size_t kExitGapRatio = 4, kExitGapSteps = 32;

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
  size_t shortest_gap = SIZE_MAX, longest_gap = 0;  // steps between two passes of x
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
    const size_t gap = path.size() - 1 - passes.back();
    shortest_gap = std::min(shortest_gap, gap);
    longest_gap = std::max(longest_gap, gap);
    passes.push_back(path.size() - 1);
    const bool left_loop =
        longest_gap >= kExitGapRatio * shortest_gap && longest_gap >= shortest_gap + kExitGapSteps;
    // Its registers change at each pass.
    if (!left_loop && passes.size() > kChangingPasses && path.size() > kChangingSteps)
      return here();
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
