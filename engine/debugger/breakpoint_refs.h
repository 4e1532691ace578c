// Reference-counted software breakpoints on a timeline: user breakpoints and the temporary
// ones that stepping plants can share an address without removing each other's.
#pragma once

#include <cstdint>
#include <map>

#include "engine/timeline/timeline.h"

namespace rwd {

/// Counts holders per address; the timeline has the breakpoint while the count is positive.
class BreakpointRefs {
 public:
  explicit BreakpointRefs(Timeline& timeline) : timeline_(timeline) {}
  void add(uint64_t addr) {
    if (refs_[addr]++ == 0) timeline_.add_breakpoint(addr);
  }
  void remove(uint64_t addr) {
    auto it = refs_.find(addr);
    if (it == refs_.end()) return;
    if (--it->second == 0) {
      refs_.erase(it);
      timeline_.remove_breakpoint(addr);
    }
  }

 private:
  Timeline& timeline_;
  std::map<uint64_t, int> refs_;
};

/// Holds one temporary breakpoint for a scope.
class TempBreakpoint {
 public:
  TempBreakpoint(BreakpointRefs& refs, uint64_t addr) : refs_(refs), addr_(addr) {
    refs_.add(addr);
  }
  ~TempBreakpoint() { refs_.remove(addr_); }
  TempBreakpoint(const TempBreakpoint&) = delete;
  TempBreakpoint& operator=(const TempBreakpoint&) = delete;

 private:
  BreakpointRefs& refs_;
  uint64_t addr_;
};

}  // namespace rwd
