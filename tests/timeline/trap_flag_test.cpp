// Single steps over a program's own pushf and popf (tests/programs/trap_flag_steps.c), forwards
// and backwards: the step's trap flag must show neither in the registers nor in the word pushf
// stores, and the replay must run on to the end as recorded (a round that saw TF makes a
// syscall the recording does not have). Replay's counting trampolines pushf and popf too; a
// random walk over lazy_mask once diverged when a step through one left TF set.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "engine/timeline/timeline.h"
#include "tests/support/nm_symbol.h"
#include "tests/support/recorded_trace.h"

using namespace rwd;

namespace {
constexpr uint64_t kTrapFlag = 0x100;  // rflags.TF
}  // namespace

TEST_CASE("single steps over pushf and popf leave no trap flag behind") {
  Timeline tl(::test::recorded_trace(REWIND_BIN, TRAP_FLAG_STEPS));
  const pid_t tid = tl.current().tid;
  const uint64_t probe = rwd::test::nm_symbol(TRAP_FLAG_STEPS, "flags_probe");
  const uint64_t seen = rwd::test::nm_symbol(TRAP_FLAG_STEPS, "seen");
  REQUIRE(probe != 0);
  REQUIRE(seen != 0);
  const CodeSite site = tl.code_site(tid, probe);
  tl.add_breakpoint(site);
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    REQUIRE(tl.resume_forward().reason == StopReason::Breakpoint);
    REQUIRE(tl.registers(tid).rip == probe);
    const uint64_t return_to = [&] {
      std::vector<uint8_t> b = tl.read_memory(tid, tl.registers(tid).rsp, 8);
      uint64_t a = 0;
      std::memcpy(&a, b.data(), 8);
      return a;
    }();
    // Every instruction of flags_probe, one step each, up to its return.
    std::vector<Registers> path{tl.registers(tid)};
    while (path.back().rip != return_to && path.size() < 64) {
      REQUIRE(tl.step_forward(tid).reason == StopReason::Step);
      path.push_back(tl.registers(tid));
      CHECK((path.back().eflags & kTrapFlag) == 0);
    }
    REQUIRE(path.back().rip == return_to);
    std::vector<uint8_t> word = tl.read_memory(tid, seen + 8 * round, 8);
    uint64_t flags = 0;
    std::memcpy(&flags, word.data(), 8);
    CHECK(flags != 0);  // what pushf stored (IF at least)
    CHECK((flags & kTrapFlag) == 0);
    // And back over the same instructions, to the same registers.
    for (size_t i = path.size() - 1; i > 0; --i) {
      INFO("step back to instruction " << i - 1);
      REQUIRE(tl.step_backward(tid).reason == StopReason::Step);
      CHECK(registers_equal(tl.registers(tid), path[i - 1]));
    }
    for (size_t i = 1; i < path.size(); ++i)
      REQUIRE(tl.step_forward(tid).reason == StopReason::Step);
    CHECK(registers_equal(tl.registers(tid), path.back()));
  }
  // On to the end as recorded: no round saw TF, so none made a syscall the recording lacks.
  tl.remove_breakpoint(site);
  CHECK(tl.resume_forward().reason == StopReason::TraceEnd);
}
