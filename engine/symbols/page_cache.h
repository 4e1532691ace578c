// Page-at-a-time reads of a stopped process's memory, kept for the life of one stop: the
// unwinder and the interpreter-frame readers make many small reads, and on a replay each read
// of the Target is a round trip to the timeline's engine thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/symbols/target.h"

namespace rwd {

/// Reads `target`'s memory through whole 4 KiB pages, each read from the target once. The
/// process must stay stopped while this lives (discard it when it runs again).
class PageCache {
 public:
  explicit PageCache(Target& target) : target_(target) {}
  /// Copies the `n` bytes at `addr` into `out`; false when any of them is unreadable (then
  /// `out` may hold part of them).
  bool read(uint64_t addr, void* out, size_t n);
  Target& target() { return target_; }

 private:
  Target& target_;
  /// Page address -> its bytes: shorter than a page where the page is not (wholly) readable.
  std::unordered_map<uint64_t, std::vector<uint8_t>> pages_;
};

}  // namespace rwd
