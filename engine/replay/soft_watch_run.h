// Running a replayed task whose debug-register slots are kept in software (the CPU's do not
// serve programs here: engine/os/soft_debug_registers.h).
#pragma once

#include "engine/os/interruptible_wait.h"
#include "engine/replay/replay_task.h"

namespace rwd {

/// run_once's resume and wait for task `t` with a software slot armed, resumed with `request`
/// and signal `sig`. A continue (PTRACE_SYSEMU) stops where a slot fires, as the CPU's slot
/// would stop it, or at any other stop, or where `interrupt` is due (Stop::Interrupted):
/// - with only write slots armed, the pages that hold the watched bytes are made read-only
///   (mprotect, run in the task through its known `syscall` instruction: watched_pages.h),
///   so that it runs at full speed and stops only at writes to those pages; each such write
///   is stepped with the pages writable again and fires when the watched bytes changed. The
///   pages stay read-only at the stop this returns, until anything else runs in that memory
///   (run_once gives them their protection back first);
/// - with an execute slot armed, as above with an int3 over its instruction for the run
///   (taken out at the stop; the slot's instruction, where the task stands on it, runs first
///   by a step, as the CPU's resume flag lets it): where the byte there is an int3 already,
///   or no `syscall` instruction is known yet, by single steps, each looked at
///   (soft_debug_after_step).
/// A single step the caller asked for is looked at for write slots. Throws SystemError and
/// DivergenceError as run_once does.
Stop run_with_soft_slots(ReplayTask& t, int request, int sig, const InterruptWhen& interrupt);

}  // namespace rwd
