#include "step_flags.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "engine/arch/insn.h"
#include "engine/os/ptrace_ops.h"

namespace rwd {

namespace {

constexpr uint64_t kTrapFlag = 0x100;  ///< rflags.TF

/// A single step this thread started, and what it should leave.
struct StepNote {
  pid_t tid;
  /// Whether TF is the program's own once the step has run: it was before, or the stepped
  /// popf loads it from the program's word.
  bool own_after;
  /// The stepped instruction is a pushf: where the task stands once it has run it.
  bool pushf;
  uint64_t rip_after;
  uint64_t rsp_after;  ///< where the pushed word is
};
thread_local std::vector<StepNote> steps;

/// Takes the note for `tid` out of `steps`, if there is one.
std::optional<StepNote> take(pid_t tid) {
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].tid == tid) {
      const StepNote note = steps[i];
      steps[i] = steps.back();
      steps.pop_back();
      return note;
    }
  return std::nullopt;
}

/// Reads the 8 bytes at `addr` of task `tid`.
bool peek(pid_t tid, uint64_t addr, long& word) {
  errno = 0;
  word = ptrace(PTRACE_PEEKDATA, tid, reinterpret_cast<void*>(addr), nullptr);
  return errno == 0;
}

}  // namespace

void note_resume(pid_t tid, int request) {
  take(tid);
  if (request != PTRACE_SINGLESTEP && request != PTRACE_SYSEMU_SINGLESTEP) return;
  Registers r;
  long word = 0;
  if (!try_get_regs(tid, r) || !peek(tid, r.rip, word)) return;
  uint8_t code[sizeof word];
  std::memcpy(code, &word, sizeof word);
  const size_t p = insn_prefix_length(code, sizeof code);
  if (p >= sizeof code) return;
  bool narrow = false, wide = false;  // operand size: 66 without REX.W is 16 bits
  for (size_t i = 0; i < p; ++i) {
    if (code[i] == 0x66) narrow = true;
    if (i + 1 == p && code[i] >= 0x40 && code[i] <= 0x4f) wide = code[i] & 8;  // REX
  }
  const size_t size = narrow && !wide ? 2 : 8;
  StepNote note{tid, (r.eflags & kTrapFlag) != 0, false, r.rip + p + 1, r.rsp - size};
  if (code[p] == 0xcf) return;  // iret: left as the kernel leaves it
  if (code[p] == 0x9d) {        // popf: TF is what it loads (Intel SDM vol. 2, POPF)
    long popped = 0;
    if (!peek(tid, r.rsp, popped)) return;
    note.own_after = popped & long(kTrapFlag);
  } else if (code[p] == 0x9c && !note.own_after) {  // pushf (Intel SDM vol. 2, PUSHF)
    note.pushf = true;
  }
  steps.push_back(note);
}

void settle_step(pid_t tid, int status) {
  if (steps.empty()) return;
  const std::optional<StepNote> noted = take(tid);
  if (!noted) return;
  const StepNote& step = *noted;
  Registers r;
  if (!WIFSTOPPED(status) || !try_get_regs(tid, r)) return;
  if (step.pushf && WSTOPSIG(status) == SIGTRAP && (status >> 16) == 0 && r.rip == step.rip_after &&
      r.rsp == step.rsp_after) {
    long word = 0;
    if (peek(tid, step.rsp_after, word) && (word & long(kTrapFlag)))
      ptrace(PTRACE_POKEDATA, tid, reinterpret_cast<void*>(step.rsp_after),
             reinterpret_cast<void*>(word & ~long(kTrapFlag)));
  }
  // After a stepped popf the kernel takes TF for the program's own (arch/x86/kernel/step.c,
  // enable_single_step: is_setting_trap_flag clears TIF_FORCED_TF), so the steps after it
  // show TF and a resume without a step leaves it set.
  if ((r.eflags & kTrapFlag) && !step.own_after) {
    r.eflags &= ~kTrapFlag;
    try_set_regs(tid, r);
  }
}

}  // namespace rwd
