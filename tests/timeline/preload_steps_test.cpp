// Single steps backwards through librewind_preload.so's code, over a real recording of
// tests/programs/symbols_demo.c (linked -no-pie): its printf() makes buffered syscalls, each
// through a patched syscall site, the site's stub in the library's stub area, and the
// library's entry. The stub area keeps each stub's return address (data) just before the
// stub's code; a reverse step there once patched a counting jump over an "instruction" that
// decoding backwards had read in those bytes, and the replay died of SIGILL. Each reverse step
// here must land on the registers the forward steps went through.
#include <signal.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "engine/timeline/timeline.h"
#include "tests/support/nm_symbol.h"
#include "tests/support/recorded_trace.h"

using namespace rwd;

namespace {

/// Whether `rip` lies in librewind_preload.so's mappings in task `tid`'s process (a replay
/// maps the trace's copy, files/librewind_preload.so-N).
bool in_preload_library(Timeline& tl, pid_t tid, uint64_t rip) {
  for (const ProcMapping& m : tl.mappings(tid))
    if (rip >= m.start && rip < m.end && m.path.find("librewind_preload.so") != std::string::npos)
      return true;
  return false;
}

}  // namespace

TEST_CASE(
    "reverse steps through a syscall stub of librewind_preload.so retrace the forward steps") {
  Timeline tl(::test::recorded_trace(REWIND_BIN, DEMO_NOPIE));
  const pid_t tid = tl.current().tid;
  // scaled() runs just before main's printf().
  const uint64_t scaled = rwd::test::nm_symbol(DEMO_NOPIE, "scaled");
  REQUIRE(scaled != 0);
  const CodeSite site = tl.code_site(tid, scaled);
  tl.add_breakpoint(site);
  REQUIRE(tl.resume_forward().reason == StopReason::Breakpoint);
  tl.remove_breakpoint(site);

  // Forwards, one instruction at a time, into printf and on to its first buffered syscall:
  // through the stub and 24 instructions into the library.
  constexpr size_t kInside = 24, kBefore = 8;
  std::vector<Registers> trail{tl.registers(tid)};
  size_t entered = 0;  // the trail's first entry inside the library
  while (entered == 0 || trail.size() < entered + kInside) {
    REQUIRE(trail.size() < 5000);  // printf reaches its first syscall long before
    REQUIRE(tl.step_forward(tid).reason == StopReason::Step);
    trail.push_back(tl.registers(tid));
    if (entered == 0 && in_preload_library(tl, tid, trail.back().rip)) entered = trail.size() - 1;
  }
  REQUIRE(entered > kBefore);

  // Backwards over the same instructions, to 8 before the stub.
  for (size_t i = trail.size() - 1; i > entered - kBefore; --i) {
    INFO("reverse step from trail entry " << i << " at rip " << std::hex << trail[i].rip);
    REQUIRE(tl.step_backward(tid).reason == StopReason::Step);
    Registers r = tl.registers(tid);
    INFO("landed at rip " << std::hex << r.rip << ", expected " << trail[i - 1].rip);
    REQUIRE(registers_equal(r, trail[i - 1]));
  }
  // ...and forwards again to the end, as recorded.
  CHECK(tl.resume_forward().reason == StopReason::TraceEnd);
}

TEST_CASE(
    "a reverse step out of a signal handler lands where a timer signal came between "
    "buffered syscalls") {
  // tests/programs/mask_race.c: SIGALRM every 200 us while a loop makes buffered
  // sigprocmask calls. The first signal comes after buffered records of its event: its point
  // is found after a pause in the buffer, and a reverse step from the handler counts single
  // steps from that pause. A step onto the point's instruction, where the replay waited
  // with a hardware breakpoint, passed it (its resume flag): the replay ran on past the
  // event's records ("made syscall rt_sigprocmask after the last call the recording
  // buffered there").
  Timeline tl(::test::recorded_trace(REWIND_BIN, MASK_RACE));
  const pid_t tid = tl.current().tid;
  StopInfo s = tl.resume_forward();
  REQUIRE(s.reason == StopReason::Signal);
  REQUIRE(s.signo == SIGALRM);
  const Registers at_signal = tl.registers(tid);
  tl.step_forward(tid);  // delivered: the handler's first instruction
  const Registers in_handler = tl.registers(tid);
  REQUIRE(in_handler.rip != at_signal.rip);
  REQUIRE(tl.step_forward(tid).reason == StopReason::Step);
  REQUIRE(tl.step_backward(tid).reason == StopReason::Step);
  CHECK(registers_equal(tl.registers(tid), in_handler));
  REQUIRE(tl.step_backward(tid).reason == StopReason::Step);
  CHECK(registers_equal(tl.registers(tid), at_signal));
  // ...and forwards again to the end, as recorded, stopping at each of the other signals.
  StopInfo next;
  int signals = 0;
  while ((next = tl.resume_forward()).reason == StopReason::Signal && signals < 1000) ++signals;
  CHECK(next.reason == StopReason::TraceEnd);
  CHECK(signals >= 59);  // 60 ticks
}
