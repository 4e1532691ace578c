// Reverse steps and continues whose replays run through the heap's first growth, over a real
// recording of tests/programs/heap_after_loop.c (linked -no-pie): tick(i) in a loop, a malloc
// before tick(50) that moves the program break (brk(2), buffered, made for real in replay),
// then done(). Replay's brk must grow the heap as the recorded one did, whatever rewind maps
// into the program while it searches (trampolines are kept out of the room the heap grows
// into, by proc_brk_start: tests/unit/point_trampoline_test.cpp checks that; a replay that
// passes its target with one mapped, which this test cannot force, is where a wrong heap
// start showed, as a divergence at brk).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/timeline/timeline.h"
#include "tests/support/nm_symbol.h"
#include "tests/support/recorded_trace.h"

using namespace rwd;

namespace {

uint64_t symbol(const char* name) {
  uint64_t addr = rwd::test::nm_symbol(HEAP_AFTER_LOOP, name);  // -no-pie: nm's address
  REQUIRE(addr != 0);
  return addr;
}

/// Sets REWIND_INTERVAL_CHECKPOINTS for the life of the object, then back to the default.
struct IntervalCheckpointsOff {
  IntervalCheckpointsOff() { setenv("REWIND_INTERVAL_CHECKPOINTS", "0", 1); }
  ~IntervalCheckpointsOff() { unsetenv("REWIND_INTERVAL_CHECKPOINTS"); }
};

}  // namespace

TEST_CASE("reverse steps that replay the heap's first growth land as the forward steps went") {
  // Without checkpoints inside the interval, every replay starts from the event before the
  // loop, and so runs through the malloc.
  IntervalCheckpointsOff off;
  Timeline tl(::test::recorded_trace(REWIND_BIN, HEAP_AFTER_LOOP));
  const pid_t tid = tl.current().tid;

  // Into tick(79), three instructions, and back: the instruction before is passed once a
  // call, so the replays count its passes (a trampoline in the loop's code) from the loop's
  // start, through the malloc.
  const CodeSite tick = tl.code_site(tid, symbol("tick"));
  tl.add_breakpoint(tick);
  for (int i = 0; i < 80; ++i) REQUIRE(tl.resume_forward().reason == StopReason::Breakpoint);
  REQUIRE(tl.registers(tid).rdi == 79);
  tl.remove_breakpoint(tick);
  std::vector<Registers> in_tick{tl.registers(tid)};
  for (int i = 0; i < 3; ++i) {
    REQUIRE(tl.step_forward(tid).reason == StopReason::Step);
    in_tick.push_back(tl.registers(tid));
  }
  for (size_t i = in_tick.size() - 1; i > 0; --i) {
    INFO("reverse step to tick(79)'s instruction " << i - 1);
    REQUIRE(tl.step_backward(tid).reason == StopReason::Step);
    CHECK(registers_equal(tl.registers(tid), in_tick[i - 1]));
  }

  const CodeSite done = tl.code_site(tid, symbol("done"));
  tl.add_breakpoint(done);
  REQUIRE(tl.resume_forward().reason == StopReason::Breakpoint);
  tl.remove_breakpoint(done);
  const Registers at_done = tl.registers(tid);
  std::vector<uint8_t> ret = tl.read_memory(tid, at_done.rsp, 8);
  REQUIRE(ret.size() == 8);
  uint64_t return_address = 0;
  std::memcpy(&return_address, ret.data(), 8);

  // Back out of done() onto its call in main, then four instructions further back; each
  // lands where a forward step from it comes back to.
  std::vector<Registers> trail{at_done};
  for (int i = 0; i < 5; ++i) {
    INFO("reverse step " << i);
    REQUIRE(tl.step_backward(tid).reason == StopReason::Step);
    trail.push_back(tl.registers(tid));
  }
  CHECK(trail[1].rip == return_address - 5);  // the call (e8 rel32)
  for (size_t i = trail.size() - 1; i > 0; --i) {
    INFO("forward step to trail entry " << i - 1);
    REQUIRE(tl.step_forward(tid).reason == StopReason::Step);
    CHECK(registers_equal(tl.registers(tid), trail[i - 1]));
  }

  // A reverse continue to tick(): its last call, tick(99).
  tl.add_breakpoint(tick);
  REQUIRE(tl.resume_backward().reason == StopReason::Breakpoint);
  CHECK(tl.registers(tid).rdi == 99);
  tl.remove_breakpoint(tick);
  CHECK(tl.resume_forward().reason == StopReason::TraceEnd);
}
