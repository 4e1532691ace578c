// A single step's trap flag, kept out of the program's state. ptrace's PTRACE_SINGLESTEP sets
// rflags.TF for one instruction and hides it from PTRACE_GETREGS (arch/x86/kernel/step.c,
// TIF_FORCED_TF), but two instructions see it: a stepped `pushf` saves it in the task's memory
// (Intel SDM vol. 3, 18.3.1.4), a word the program never held natively; and after a stepped
// `popf` the kernel takes TF for the program's own (is_setting_trap_flag), so the steps after
// it show TF in the registers and a resume without a step leaves it set: the registers at the
// next points differ from the recording's and the task traps at every instruction. Replay's
// counting trampolines pushf and popf, and a replay may step through them (a software
// breakpoint or watchpoint steps every instruction on machines without debug registers).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace rwd {

/// Before resuming task `tid` with a single-step request (PTRACE_SINGLESTEP or
/// PTRACE_SYSEMU_SINGLESTEP): notes whether TF is the program's own once the step has run
/// (the registers show it now, or a stepped popf loads it) and whether the instruction is a
/// `pushf` (any operand size). Any other request forgets what was noted for `tid`. An `iret`
/// is left as the kernel leaves it. Thread-local: the thread that resumes a task is the one
/// that waits for it. Reads the task's registers (or their cached copy), 8 bytes of code and,
/// at a popf, the word it pops; never throws.
void note_resume(pid_t tid, int request);

/// After waiting for `tid` with wait status `status`, the stop of a step noted by note_resume:
/// clears TF in the word a stepped `pushf` pushed (a SIGTRAP stop just past it, rsp lowered
/// by its size), and in the registers where the program does not own it. Forgets the note.
/// Never throws (a task gone is left alone).
void settle_step(pid_t tid, int status);

}  // namespace rwd
