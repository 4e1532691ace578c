// Single instructions as the program sees them. librewind_preload.so runs inside the
// recorded process (a patched syscall site jumps into it), but a debugger's stack shows a
// task in its code as the program at the site (engine/symbols/unwinder.cpp): so a step takes
// the site's whole excursion into the library as one instruction, as the `syscall` it
// replaced was one.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <utility>

#include "engine/symbols/module_list.h"
#include "engine/timeline/timeline.h"

namespace rwd {

/// Steps one task of a timeline by one program instruction, either way.
class ProgramSteps {
 public:
  ProgramSteps(Timeline& timeline, ModuleList& modules) : tl_(timeline), modules_(modules) {}

  /// One instruction forward (Timeline::step_forward); from a patched site, or from inside
  /// the library, on to the program's next instruction after the site. Returns the stop:
  /// reason Step, or whatever ended the step early (a signal, a breakpoint, the end).
  StopInfo forward(pid_t tid);
  /// One instruction back (Timeline::step_backward); back into the library, on back to the
  /// site's jump into it, where the program stood before its syscall. Whatever ends a step
  /// early (the start of the trace) ends it, as in forward().
  StopInfo backward(pid_t tid);

 private:
  /// Whether task `tid` stands in the library's code `code` ([lo, hi), runtime) now.
  bool in_library(pid_t tid, const std::pair<uint64_t, uint64_t>& code);

  Timeline& tl_;
  ModuleList& modules_;
};

}  // namespace rwd
