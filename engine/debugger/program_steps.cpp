#include "engine/debugger/program_steps.h"

#include <cstring>

#include "engine/symbols/unwinder.h"

namespace rwd {

namespace {

/// Bounds a walk through the library (a buffered syscall runs a few hundred instructions
/// there); far above any real excursion.
constexpr int kMaxLibraryInstructions = 1'000'000;

}  // namespace

bool ProgramSteps::in_library(pid_t tid, const std::pair<uint64_t, uint64_t>& code) {
  uint64_t rip = tl_.registers(tid).rip;
  return rip >= code.first && rip < code.second;
}

StopInfo ProgramSteps::forward(pid_t tid) {
  StopInfo s = tl_.step_forward(tid);
  auto code = preload_code(modules_);
  if (!code) return s;
  for (int n = 0;
       n < kMaxLibraryInstructions && s.reason == StopReason::Step && in_library(tid, *code); ++n)
    s = tl_.step_forward(tid);
  return s;
}

StopInfo ProgramSteps::backward(pid_t tid) {
  auto code = preload_code(modules_);
  if (!code) return tl_.step_backward(tid);
  // Each reverse step goes back past the library's instructions to the last point outside
  // it (one replay). That point may lie before the task's last event (a syscall the library
  // made): then the step stops at the event, still inside, and the next one goes on.
  StopInfo s = tl_.step_backward(tid, code->first, code->second);
  for (int n = 0; n < kMaxLibraryInstructions && s.reason == StopReason::Step; ++n) {
    Registers before = tl_.registers(tid);
    if (before.rip < code->first || before.rip >= code->second) break;  // out of the library
    // A step that did not move (the task has not run since the last event, another task's)
    // would repeat for ever: stop there.
    uint64_t event = s.event;
    s = tl_.step_backward(tid, code->first, code->second);
    Registers now = tl_.registers(tid);
    if (s.event == event && std::memcmp(&before, &now, sizeof now) == 0) break;
  }
  return s;
}

}  // namespace rwd
