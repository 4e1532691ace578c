// A software stand-in for the x86 debug registers where the CPU's do not serve tracees
// (hardware_debug_registers() is false: a PVM guest, whose host does not load them while the
// guest's user code runs, so that gdb's hardware watchpoints never fire there either), and
// everywhere for a write slot no CPU slot can hold (a wide watch: a struct or an array,
// debug_registers.h's wide_watch()). The slot functions of debug_registers.h keep such
// slots here instead; the tracer runs an armed thread with the watched pages read-only, an
// int3 at the execute slot's address, or by single steps (run_once,
// engine/replay/replay_task.h; engine/replay/soft_watch_run.h), and after each step asks
// soft_debug_after_step whether a slot fired. An execute slot fires when the thread
// stands at its address (before that instruction runs, as the CPU's does); a write slot
// fires when the watched bytes changed, or when the tracer saw a push or a decoded store
// land on them (soft_debug_note_write); a string instruction's later stores of the value
// already there go unseen (gdb's software
// watchpoints have the same limit). Reads cannot be seen: a read-and-write slot is refused.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/os/debug_registers.h"

namespace rwd {

/// Whether thread `tid` has a software slot armed (its runs must go by single steps).
bool soft_debug_armed(pid_t tid);

/// Reads again the bytes that `tid`'s write slots watch: what changed them while the thread
/// was stopped (the replay writing a syscall's results) is not one of its writes. Call before
/// each resume of an armed thread.
void soft_debug_resync(pid_t tid);

/// After one single step of `tid`, which now stands at `rip`: sets the bits of the slots that
/// fired in its emulated DR6 (take_debug_status returns them) and says whether any did.
/// Execute slots are looked at only when `own_step` (rewind's step of a continue, not one the
/// debugger asked for: there the CPU reports the breakpoint at the next resume); then the
/// kernel's single-step bit (DR6.BS) is cleared too, as the CPU would not set it.
bool soft_debug_after_step(pid_t tid, uint64_t rip, bool own_step);

/// Thread `tid` wrote [`addr`, `addr` + `len`) with the instruction it just ran (a push seen
/// as rsp going down by 8, or a store decoded before it ran): sets the emulated DR6
/// bits of the write and read-write slots that overlap it, whether or not the value
/// changed (the CPU's slots fire at any write). Returns whether any did.
bool soft_debug_note_write(pid_t tid, uint64_t addr, uint64_t len);

/// A watched range of bytes: address, length in bytes.
struct SoftWatchRange {
  uint64_t addr = 0;
  int len = 0;
};

/// The ranges `tid`'s armed write slots watch.
std::vector<SoftWatchRange> soft_write_ranges(pid_t tid);

/// The address of `tid`'s armed execute slot (rewind arms at most one: slot 0, reaching a
/// recorded point, reach_point.h), or nullopt where none is armed. A run of the thread stops
/// there by single steps or by an int3 put in for the run (soft_watch_run.h).
std::optional<uint64_t> soft_exec_address(pid_t tid);

/// The software slots behind debug_registers.h's functions (slot 0..3); set_soft_slot throws
/// Error for a read-and-write slot and SystemError when the watched bytes cannot be read.
void set_soft_slot(pid_t tid, int slot, uint64_t addr, int len, WatchKind kind);
/// Disarms software slot `slot` of `tid`.
void clear_soft_slot(pid_t tid, int slot);
/// Takes (and clears) the emulated DR6 bits of `tid`.
uint64_t take_soft_status(pid_t tid);

}  // namespace rwd
