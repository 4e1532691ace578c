// Single steps backwards through librewind_preload.so's code, over a real recording of
// tests/programs/symbols_demo.c (linked -no-pie): its printf() makes buffered syscalls, each
// through a patched syscall site, the site's stub in the library's stub area, and the
// library's entry. The stub area keeps each stub's return address (data) just before the
// stub's code; a reverse step there once patched a counting jump over an "instruction" that
// decoding backwards had read in those bytes, and the replay died of SIGILL. Each reverse step
// here must land on the registers the forward steps went through.
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
