// The hardware-ticks path's logic (skid handling, reaching a target) against a fake counter,
// since this machine has no hardware counter.
#include <catch2/catch.hpp>
#include <random>
#include <vector>

#include "engine/ticks/ticks_counter.h"

using namespace rwd;

namespace {

/// A tiny program: a loop of three instructions whose last is a conditional branch (one
/// tick each time it retires), run `loops` times, then two straight instructions.
struct FakeProgram {
  uint64_t loops = 50;
  uint64_t pc = 0, counter = 0, ticks = 0, acc = 0;
  bool done() const { return pc >= 5; }
  void step() {
    switch (pc) {
      case 0:
        acc += 3;
        pc = 1;
        break;
      case 1:
        acc ^= counter;
        pc = 2;
        break;
      case 2:  // conditional branch back to 0
        ++ticks;
        ++counter;
        pc = counter < loops ? 0 : 3;
        break;
      case 3:
        acc *= 7;
        pc = 4;
        break;
      case 4:
        pc = 5;
        break;
    }
  }
  Registers regs() const {
    Registers r{};
    r.rip = 0x401000 + pc * 4;
    r.rax = counter;
    r.rbx = acc;
    return r;
  }
};

/// A counter whose interrupt lands 0..skid ticks late (pseudo-random, as AMD's skid does),
/// or always exactly `skid` late when `fixed`.
struct FakeCounter : TicksCounter {
  FakeProgram& p;
  uint64_t skid;
  bool fixed;
  std::mt19937 rng{42};
  uint64_t trigger = UINT64_MAX;
  FakeCounter(FakeProgram& prog, uint64_t s, bool always_late = false)
      : p(prog), skid(s), fixed(always_late) {}
  uint64_t read() override { return p.ticks; }
  void interrupt_after(uint64_t n) override {
    trigger = p.ticks + n + (fixed ? skid : skid ? rng() % (skid + 1) : 0);
  }
  void cancel_interrupt() override { trigger = UINT64_MAX; }
};

struct FakeTask : SteppableTask {
  FakeProgram& p;
  FakeCounter& c;
  uint64_t steps = 0;
  FakeTask(FakeProgram& prog, FakeCounter& counter) : p(prog), c(counter) {}
  bool run_to_interrupt() override {
    while (!p.done()) {
      p.step();
      if (p.ticks >= c.trigger) return true;
    }
    return false;
  }
  bool single_step() override {
    if (p.done()) return false;
    p.step();
    ++steps;
    return true;
  }
  Registers regs() override { return p.regs(); }
};

/// Every (ticks, registers) state of one run of the program, in order.
std::vector<std::pair<uint64_t, Registers>> reference_states() {
  FakeProgram p;
  std::vector<std::pair<uint64_t, Registers>> out;
  while (!p.done()) {
    out.emplace_back(p.ticks, p.regs());
    p.step();
  }
  return out;
}

}  // namespace

TEST_CASE("reaches every point of a run exactly, whatever the skid") {
  auto states = reference_states();
  for (uint64_t skid : {0u, 1u, 5u, 70u}) {
    for (size_t i = 0; i < states.size(); i += 7) {
      FakeProgram p;
      FakeCounter c(p, skid);
      FakeTask t(p, c);
      auto [ticks, regs] = states[i];
      REQUIRE(reach_tick_target(c, t, ticks, regs, skid) == TickTargetResult::Reached);
      CHECK(p.ticks == ticks);
      CHECK(registers_equal(p.regs(), regs));
      // Fast phase did the bulk: stepping is bounded by the skid window, not the run.
      CHECK(t.steps <= 3 * (skid + 1) + 3);
    }
  }
}

TEST_CASE("a counter that skids more than promised is caught as an overshoot") {
  auto states = reference_states();
  auto [ticks, regs] = states[100];
  FakeProgram p;
  FakeCounter c(p, 10, true);  // every interrupt lands 10 ticks late
  FakeTask t(p, c);
  // Promise a skid of 2: the interrupt lands 8 ticks past the target.
  auto r = reach_tick_target(c, t, ticks, regs, 2);
  CHECK(r == TickTargetResult::Overshot);
}

TEST_CASE("registers that never occur at the target tick are not reported as reached") {
  auto states = reference_states();
  auto [ticks, regs] = states[60];
  regs.rbx ^= 1;  // a state the program never has
  FakeProgram p;
  FakeCounter c(p, 5);
  FakeTask t(p, c);
  CHECK(reach_tick_target(c, t, ticks, regs, 5) != TickTargetResult::Reached);
}
