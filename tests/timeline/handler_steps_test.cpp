// Steps from a breakpoint on a signal handler's first instruction, over a real recording of
// tests/programs/lazy_mask.c (random_walk's build: -no-pie, -O0, SIGALRM every 300 us while a
// loop makes buffered sigprocmask calls). A signal's delivery leaves the task on the handler's
// first instruction without executing the breakpoint's int3: the timeline reports that hit when
// the task is next resumed, and the debugger's next operation is served from inside that
// resume.
#include <catch2/catch.hpp>

#include "engine/timeline/timeline.h"
#include "tests/support/nm_symbol.h"
#include "tests/support/recorded_trace.h"

using namespace rwd;

TEST_CASE("a single step from a breakpoint on a signal handler's entry runs one instruction") {
  // The step once ran as the continue's step over the breakpoint had been decided before the
  // hit paused (nothing reported) and then as a step: two instructions, and a step back from
  // there did not return to the breakpoint.
  Timeline tl(::test::recorded_trace(REWIND_BIN, LAZY_MASK_WALK));
  const pid_t tid = tl.current().tid;
  const uint64_t handler = rwd::test::nm_symbol(LAZY_MASK_WALK, "on_alarm");
  REQUIRE(handler != 0);
  const CodeSite site = tl.code_site(tid, handler);
  tl.add_breakpoint(site);
  for (int hit = 1; hit <= 3; ++hit) {
    INFO("hit " << hit);
    StopInfo s;
    do s = tl.resume_forward();
    while (s.reason == StopReason::Signal);
    REQUIRE(s.reason == StopReason::Breakpoint);
    const Registers at_entry = tl.registers(tid);
    REQUIRE(at_entry.rip == handler);
    REQUIRE(tl.step_forward(tid).reason == StopReason::Step);
    // -O0 code: the handler begins with `push %rbp`, one byte, which moves the stack pointer.
    const Registers after = tl.registers(tid);
    CHECK(after.rip == handler + 1);
    CHECK(after.rsp == at_entry.rsp - 8);
    REQUIRE(tl.step_backward(tid).reason == StopReason::Step);
    CHECK(registers_equal(tl.registers(tid), at_entry));
    REQUIRE(tl.step_forward(tid).reason == StopReason::Step);
    CHECK(registers_equal(tl.registers(tid), after));
  }
  // On to the end, as recorded: a stop at each signal, and no breakpoint hit.
  tl.remove_breakpoint(site);
  StopInfo s;
  int signals = 0;
  while ((s = tl.resume_forward()).reason == StopReason::Signal && signals < 1000) ++signals;
  CHECK(s.reason == StopReason::TraceEnd);
}
