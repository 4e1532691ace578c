#include "schedule_policy.h"

#include <algorithm>

namespace rwd {

SchedulePolicy::SchedulePolicy(bool chaos, uint64_t seed)
    : chaos_(chaos), rng_(seed ? seed : std::random_device{}()) {}

uint64_t SchedulePolicy::slice() {
  if (!chaos_) return kDefaultSliceTicks;
  // Mostly very short slices (preemption at unusual places), sometimes a long one (starving
  // the others, as a loaded machine would).
  uint64_t r = rng_() % 16;
  return r < 12 ? 1 + r % 3 : 20 + rng_() % 30;
}

uint64_t SchedulePolicy::slice(uint64_t point_cost_us) {
  uint64_t base = slice();
  if (chaos_) return base;
  uint64_t wanted = (point_cost_us * kPointCostShare + tick_us() - 1) / tick_us();
  return std::max(base, std::min(wanted, kMaxSliceTicks));
}

uint64_t SchedulePolicy::slice_ns() {
  uint64_t r = rng_() % 4;
  return r < 3 ? 50'000 + rng_() % 450'000 : 5'000'000 + rng_() % 7'500'000;
}

size_t SchedulePolicy::pick(size_t n) {
  return chaos_ ? size_t(rng_() % n) : 0;
}

}  // namespace rwd
