// Timing helpers shared by the C++ benchmarks under bench/ (the Python ones use
// bench_common.py): wall time since a point, and the median of samples.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace rwd::bench {

using Clock = std::chrono::steady_clock;

/// Milliseconds of wall time (steady clock) since `t0`.
inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// The median of `v` (the upper one of an even count); 0 for no samples.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace rwd::bench
