// Stops at R errors in a replayed GNU R 4.x (DAP exception filter "r-error"), forwards and
// backwards: where stop() or an error in R's own code (a builtin's "non-numeric argument")
// is signalled, caught by tryCatch or not. Every such error goes through libR's exported
// Rf_errorcall(call, format, ...) (src/main/errors.c: do_stop calls it with "%s" and the
// message; Rf_error formats its message and calls it with "%s" too), so a breakpoint there
// is the stop; the R stack then shows the function that signalled it on top.
// Not seen: a condition object given to stop() (signalled by R code, its default handler
// errorcall_dflt is not exported).
#pragma once

#include <cstdint>
#include <optional>

#include "engine/debugger/breakpoint_refs.h"
#include "engine/debugger/exception_stop.h"
#include "engine/symbols/module_list.h"
#include "engine/timeline/timeline.h"

namespace rwd {

/// The R error stops of one debugging session.
class RErrors {
 public:
  /// `modules`: the debugger's modules at the current point (refreshed by it after moves).
  RErrors(Timeline& timeline, ModuleList& modules, BreakpointRefs& refs)
      : tl_(timeline), modules_(modules), refs_(refs) {}
  ~RErrors() { end_resume(); }
  RErrors(const RErrors&) = delete;
  RErrors& operator=(const RErrors&) = delete;

  /// Whether R errors stop continues (default: no).
  void set_enabled(bool on) { on_ = on; }
  /// Whether a forward run should pause where code is mapped: errors stop and libR is not
  /// mapped yet.
  bool waits_for_interpreter() const { return on_ && !modules_.function_range(kEntry).first; }
  /// Before each run of a resume: plants the breakpoint once libR is mapped.
  void prepare();
  /// After a resume: takes it away.
  void end_resume();
  /// The error a stop is at, when `s` is a stop at the breakpoint; nullopt otherwise.
  std::optional<ExceptionStop> error_at(const StopInfo& s);

 private:
  static constexpr const char* kEntry = "Rf_errorcall";
  Timeline& tl_;
  ModuleList& modules_;
  BreakpointRefs& refs_;
  bool on_ = false;
  uint64_t at_ = 0;  ///< Rf_errorcall while its breakpoint is planted
  std::optional<CodeSite> site_;
};

}  // namespace rwd
