// Finding again, in replay, a point between two events without a hardware counter
// (DESIGN.md "Ticks, preemption and asynchronous signals"): the first time the task stands at
// the recorded instruction with the recorded registers and memory digest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/errors.h"
#include "engine/replay/point_trampoline.h"
#include "engine/replay/replay_task.h"
#include "engine/replay/trampoline_install.h"
#include "engine/trace/event.h"

namespace rwd {

/// How a point was found.
enum class PointMethod : uint8_t {
  AlreadyThere,  ///< the task stood at it
  Jump,          ///< a trampoline that compares registers in the task (PatchKind::Jump)
  Int3,          ///< an int3 at the point, a stop at every pass (PatchKind::Int3)
  Breakpoint,    ///< a hardware breakpoint, a stop at every pass
  ProgramTrap,   ///< the program's own int3 trapped right at the point (a debugger's
                 ///< breakpoint inside the recording, whose stop the recorder made a point)
  Steps,         ///< single steps through a repeated string instruction to a point inside it
};

/// The most repetitions of a string instruction PointSearch single-steps through to reach a
/// point inside it (each is one ptrace stop); past that the other methods are tried.
constexpr uint64_t kMaxRepeatSteps = 4096;

/// What reaching one point took.
struct PointFound {
  uint64_t stops = 0;  ///< ptrace stops of the task on the way
  PointMethod method = PointMethod::AlreadyThere;
  /// Stops whose registers, stack window and register windows matched the point's, so that
  /// only a digest of all writable memory could tell (each a pass over that memory).
  uint64_t full_digests = 0;
};

/// The search for event `e`'s point in task `t`, as a state machine its driver (the
/// replayer) runs: it resumes the task when asked (before_resume, then PTRACE_SYSEMU) and
/// hands it each stop that is the search's own (on_stop), until found() says where it is.
/// The task runs until its registers equal `e.regs` and the digest of its process's writable
/// memory (minus `e.exclusions`) equals `e.digest`. Methods, in order:
/// - first, without stopping on the way, to the pause after the event's last buffered record
///   (the replayer asks for one at every point's last record);
/// - a jump to a trampoline that compares the registers inside the task (point_trampoline.h),
///   so that only passes of e.regs.rip with matching registers stop; the driver must allow
///   the code patch first (patch_request, patch_answer);
/// - where the instructions after the point cannot be moved, an int3 at the point (a stop at
///   every pass, continuing through a moved copy of the instruction);
/// - where neither can be used (the point's own instruction cannot be moved, the driver
///   refuses the patch, no room in reach), a hardware breakpoint at e.regs.rip.
/// All are sound because between two events a task runs deterministically: a state seen
/// twice would repeat forever. REWIND_POINT_SEARCH=int3 or =breakpoint starts at that method
/// (for tests and measurements). Every method throws DivergenceError when the task reaches a
/// syscall, a signal or its end before the point. The task and event must outlive the search.
class PointSearch {
 public:
  /// Starts the search; when the task already stands at the point, found() says so at once.
  PointSearch(ReplayTask& t, const Event& e);
  ~PointSearch();
  PointSearch(const PointSearch&) = delete;
  PointSearch& operator=(const PointSearch&) = delete;

  /// Where the point was found, once it was.
  const std::optional<PointFound>& found() const { return found_; }
  /// The code patch the search wants to make next (addr, len), to be answered with
  /// patch_answer before anything else; nullopt when none waits.
  std::optional<std::pair<uint64_t, size_t>> patch_request() const;
  /// The driver allows (or refuses) the patch patch_request asked for.
  void patch_answer(bool allowed);
  /// Called before each resume of the task (sets the resume flag on the point's
  /// instruction for the hardware breakpoint).
  void before_resume();
  /// The task stopped with `s` (a stop that is not the driver's own): goes on, or finds the
  /// point. Throws DivergenceError.
  void on_stop(const Stop& s);
  /// A trampoline is patched into the task's code now.
  bool code_patched() const;
  /// Whether the search waits with its hardware breakpoint for the task at the point's
  /// instruction `rip`. A stop of the task there that is not that breakpoint's (a driver's
  /// single step onto the instruction) must come to on_stop too: the next resume sets the
  /// resume flag there (before_resume), which passes the breakpoint.
  bool waits_at(uint64_t rip) const { return phase_ == Phase::Breakpoint && rip == e_.regs.rip; }

 private:
  enum class Phase : uint8_t { Pauses, Methods, AwaitPatch, Trampoline, Breakpoint, Found };
  struct PointCode;
  bool at_point(const Registers& r);
  /// Tries the next method from methods_; ends in AwaitPatch, Breakpoint or Found.
  void next_method();
  void trampoline_stop(const Stop& s);
  /// Takes the search's patch out of the code, where one is in (its install_).
  void remove_patch();
  /// Clears the execution breakpoint at the point, where one is set (hw_breakpoint_).
  void clear_breakpoint();
  /// Reaches a point inside the repeated string instruction the task stands on by single
  /// steps (found, Steps); false where the point is not one.
  bool through_repeats();
  /// A SIGTRAP of the program's own int3 just before the point: the point when the state
  /// matches (found, ProgramTrap), a divergence otherwise; false for any other stop.
  bool program_trap(const Stop& s);
  void found(PointMethod m);
  DivergenceError fail(const std::string& what) const;

  ReplayTask& t_;
  const Event& e_;
  Phase phase_ = Phase::Pauses;
  uint64_t stops_ = 0;
  uint64_t full_digests_ = 0;  ///< PointFound::full_digests so far
  std::optional<PointFound> found_;
  std::vector<PatchKind> kinds_;  ///< trampoline kinds still to try, in order
  std::unique_ptr<PointCode> code_;
  PatchKind kind_ = PatchKind::Jump;            ///< the kind being tried
  std::optional<PointTrampoline> plan_;         ///< its plan
  std::unique_ptr<TrampolineInstall> install_;  ///< in place while Phase::Trampoline
  bool hw_breakpoint_ = false;                  ///< slot 0 holds the point's address
  uint64_t code_changes_ = 0;                   ///< trampolines installed or removed so far
  /// The task's mappings as at_point last read them, when code_changes_ was maps_read_at_.
  std::optional<std::vector<ProcMapping>> maps_;
  uint64_t maps_read_at_ = 0;
};

}  // namespace rwd
