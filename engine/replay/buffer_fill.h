// Putting an event's buffered syscall records into a replayed task's librewind_preload.so
// buffer, and pausing the task at a position between its records (preload/README.md,
// "Replay"; the marks and RWD_SYS_PAUSE are in preload/rewind_preload_abi.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/replay/replay_task.h"

namespace rwd {

/// Puts `records` (an event's buffered bytes, already checked well-formed and small enough
/// for the buffer with its end mark) into `t`'s buffer before it runs to that event. Without
/// `pauses`, all of them followed by the end mark. With pauses (byte positions within the
/// records, each at a record boundary, in (0, records.size()]; sorted and deduplicated
/// here), the records up to the first one followed by a pause mark: the task then stops with
/// RWD_SYS_PAUSE just before it marks used the record that ends there (take_buffer_pause).
/// Needs RWD_FEATURE_PAUSE for pauses. `from` (bytes, a record boundary): the records the
/// task has already marked used in this event (a replay continuing from a checkpoint taken
/// inside the event's interval, whose copy of the buffer holds them): only the records after
/// it are written, and pauses at or before it are passed already. Throws DivergenceError when
/// a pause is not at a record boundary or the task's library cannot pause.
void fill_buffer(ReplayTask& t, std::vector<uint8_t> records, std::vector<uint32_t> pauses,
                 uint32_t from = 0);

/// Whether the syscall `t` stands at the entry of (registers `r`) was made by
/// librewind_preload.so's replay of a buffered call, which holds the task's buffer header in
/// r12 (entry.S): only then is RWD_SYS_PAUSE or RWD_SYS_DIVERGED rewind's own
/// (rewind_preload_abi.h); a program's own call of that number got -ENOSYS when recorded.
/// (Its address does not tell: the library's stubs also make the calls of the program's
/// patched syscall sites, libc's syscall() among them.)
bool made_by_library(const ReplayTask& t, const Registers& r);

/// Whether `t`, stopped at a syscall entry (registers `r`) after PTRACE_SYSEMU or
/// PTRACE_SYSEMU_SINGLESTEP, stands at a buffered call that replay makes for real (the
/// library's run_in_replay calls, brk: engine/arch/syscalls.py): made at the untraced page's
/// instruction (rewind_preload_abi.h, RWD_UNTRACED_IP) by the library's buffered path, which
/// makes no other syscall there in replay.
bool at_call_run_in_replay(const ReplayTask& t, const Registers& r);

/// Runs the call `t` stands at (at_call_run_in_replay) as the recording's kernel did: checks
/// that the record the library is about to use is for that syscall, makes it for real, checks
/// its result against the record's, and leaves `t` after the instruction with the result in
/// rax, as a real syscall would. `stepping`: the task was single-stepped onto the call, whose
/// trap flag the instruction saved in r11, which the recording's r11 has not: cleared.
/// Throws DivergenceError when the record is another call's (or none) or the result differs.
void run_call_in_replay(ReplayTask& t, bool stepping);

/// True if `t`, just stopped at a syscall entry, made RWD_SYS_PAUSE (asked for by a pause).
bool at_buffer_pause(const ReplayTask& t);

/// Handles `t`'s stop at its next pause: checks it is about to mark used exactly the records
/// up to the pause, puts the records up to the next pause (or all that are left, with the
/// end mark) in place, and sets the registers the library's code has there without a pause
/// (rewind_preload_abi.h, RWD_SYS_PAUSE). From there on the task runs as in any other
/// replay: the first point that counts the record as used comes after the pause. Returns the
/// pause's position (bytes of records). Throws DivergenceError when `t` paused where no pause
/// was asked for.
uint32_t take_buffer_pause(ReplayTask& t);

/// Sets the signal mask `t`'s library left for rewind (RWD_FEATURE_LAZY_MASK,
/// rewind_preload_abi.h) with PTRACE_SETSIGMASK, at a ptrace stop of `t` (wait_stop calls it
/// at each one, before anything reads the mask), and marks it set. Returns the mask it set
/// (ReplayTask::blocked holds it too), or nullopt where none was left, the library has no
/// such feature, or the task cannot be read (it died).
std::optional<uint64_t> set_pending_mask(ReplayTask& t);

}  // namespace rwd
