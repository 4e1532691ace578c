// Keeping the replayer and its tracees on one CPU.
#pragma once

namespace rwd {

/// Pins the calling thread (and so every process it forks afterwards, which inherit the
/// mask: sched_setaffinity(2)) to the CPU it runs on now. Replay hands control back and
/// forth between rewind and one tracee at a time; on one CPU each ptrace stop is a plain
/// context switch instead of a cross-CPU wake-up, about 1.7 times faster on this project's
/// VMs (docs/performance.md). Returns the CPU number, or -1 if it could not pin (then
/// nothing changed).
int pin_to_current_cpu();

}  // namespace rwd
