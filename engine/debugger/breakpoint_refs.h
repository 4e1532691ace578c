// Reference-counted software breakpoints on a timeline: user breakpoints and the temporary
// ones that stepping plants can share an address without removing each other's.
#pragma once

#include <cstdint>
#include <map>

#include "engine/timeline/timeline.h"

namespace rwd {

/// Counts holders per code site; the timeline has the breakpoint while the count is
/// positive.
class BreakpointRefs {
 public:
  explicit BreakpointRefs(Timeline& timeline) : timeline_(timeline) {}
  void add(const CodeSite& site) {
    if (refs_[site]++ == 0) timeline_.add_breakpoint(site);
  }
  void remove(const CodeSite& site) {
    auto it = refs_.find(site);
    if (it == refs_.end()) return;
    if (--it->second == 0) {
      refs_.erase(it);
      timeline_.remove_breakpoint(site);
    }
  }

 private:
  Timeline& timeline_;
  std::map<CodeSite, int> refs_;
};

/// Holds one temporary breakpoint for a scope: at `addr` in task `tid`'s process.
class TempBreakpoint {
 public:
  TempBreakpoint(BreakpointRefs& refs, Timeline& timeline, pid_t tid, uint64_t addr)
      : refs_(refs), site_(timeline.code_site(tid, addr)) {
    refs_.add(site_);
  }
  ~TempBreakpoint() { refs_.remove(site_); }
  TempBreakpoint(const TempBreakpoint&) = delete;
  TempBreakpoint& operator=(const TempBreakpoint&) = delete;

 private:
  BreakpointRefs& refs_;
  CodeSite site_;
};

}  // namespace rwd
