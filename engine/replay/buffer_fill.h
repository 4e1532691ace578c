// Putting an event's buffered syscall records into a replayed task's librewind_preload.so
// buffer, and pausing the task at a position between its records (preload/README.md,
// "Replay"; the marks and RWD_SYS_PAUSE are in preload/rewind_preload_abi.h).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/replay/replay_task.h"

namespace rwd {

/// Puts `records` (an event's buffered bytes, already checked well-formed and small enough
/// for the buffer with its end mark) into `t`'s buffer before it runs to that event. Without
/// `pauses`, all of them followed by the end mark. With pauses (byte positions within the
/// records, each at a record boundary, in (0, records.size()]; sorted and deduplicated
/// here), the records up to the first one followed by a pause mark: the task then stops with
/// RWD_SYS_PAUSE just before it marks used the record that ends there (take_buffer_pause).
/// Needs RWD_FEATURE_PAUSE for pauses. Throws DivergenceError when a pause is not at a
/// record boundary or the task's library cannot pause.
void fill_buffer(ReplayTask& t, std::vector<uint8_t> records, std::vector<uint32_t> pauses);

/// Whether the syscall `t` stands at the entry of (registers `r`) was made by
/// librewind_preload.so's replay of a buffered call, which holds the task's buffer header in
/// r12 (entry.S): only then is RWD_SYS_PAUSE or RWD_SYS_DIVERGED rewind's own
/// (rewind_preload_abi.h); a program's own call of that number got -ENOSYS when recorded.
/// (Its address does not tell: the library's stubs also make the calls of the program's
/// patched syscall sites, libc's syscall() among them.)
bool made_by_library(const ReplayTask& t, const Registers& r);

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

}  // namespace rwd
