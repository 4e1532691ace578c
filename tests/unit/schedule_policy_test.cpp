// The recorder's time slices (engine/record/schedule_policy.h): how long a task runs before
// another ready task of its process gets the CPU, given what naming a preemption's point
// costs.
#include "engine/record/schedule_policy.h"

#include <catch2/catch.hpp>

using rwd::SchedulePolicy;

TEST_CASE("slices stay at the default while a preemption's point is cheap", "[schedule]") {
  SchedulePolicy p(false);
  CHECK(p.slice() == rwd::kDefaultSliceTicks);
  CHECK(p.slice(0) == rwd::kDefaultSliceTicks);
  // 200 us of digest against a 10 ms slice: 2%, under the 5% share.
  CHECK(p.slice(200) == rwd::kDefaultSliceTicks);
}

TEST_CASE("slices grow so that a preemption's point costs at most a twentieth of one",
          "[schedule]") {
  SchedulePolicy p(false);
  // A 70 ms digest (about 200 MB of writable memory here): a slice of 1.4 s.
  CHECK(p.slice(70'000) * rwd::kTickUs == 70'000 * rwd::kPointCostShare);
  // Rounded up to whole ticks.
  CHECK(p.slice(1'001) == (1'001 * rwd::kPointCostShare + rwd::kTickUs - 1) / rwd::kTickUs);
  // Never past the cap, however large the process.
  CHECK(p.slice(10'000'000) == rwd::kMaxSliceTicks);
}

TEST_CASE("chaos mode's slices stay random and short whatever a point costs", "[schedule]") {
  SchedulePolicy p(true, 42);
  for (int i = 0; i < 200; ++i) CHECK(p.slice(70'000) < 50);
}
