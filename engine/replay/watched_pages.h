// The pages that hold the bytes of software write slots (soft_debug_registers.h), made
// read-only in a replayed process so that its runs stop only at writes to them
// (soft_watch_run.h). They stay read-only from one run of the process's armed tasks to the
// next, and get their own protection back before anything else runs in that memory: a
// syscall rewind runs in a task or lets the kernel run for real (mprotect, mmap, exec,
// fork: all go through run_once), a run of a task without the slot, or rewind's single
// steps. Two mprotect calls per run otherwise made a history of a 4 KiB array cost 14 times
// the plain replay (docs/performance.md).
#pragma once

#include <cstdint>

#include "engine/replay/replay_task.h"

namespace rwd {

/// What guard_watched_pages did.
enum class PageGuard : uint8_t {
  Guarded,          ///< the pages are read-only for the run
  NothingWritable,  ///< no watched page is writable: the run needs no guard
  Failed,           ///< the mprotect failed: the pages have their own protection
};

/// The watched pages of task `t`'s memory made read-only for its next run: those of its
/// software write slots that are writable now, with the ones already read-only from its
/// process's earlier runs.
PageGuard guard_watched_pages(ReplayTask& t);

/// Whether address `addr` lies in a page guard_watched_pages made read-only in `t`'s memory.
bool in_watched_page(const ReplayTask& t, uint64_t addr);

/// Gives the pages of `t`'s memory their own protection back (running mprotect in `t`), if
/// they were made read-only: before `t` runs anything but an armed task's own code. A no-op
/// (one lookup) otherwise; never throws but DivergenceError of the mprotect's run.
void release_watched_pages(ReplayTask& t);

/// Lets the pages of `t`'s memory be written for one instruction (`writable`), or makes
/// them read-only again; false when the mprotect failed.
bool set_watched_pages_writable(ReplayTask& t, bool writable);

/// Task `t` ended: when it was its process's last (the leader's end is reported last), the
/// process's record is dropped, so that a later process with its pid starts afresh.
void watched_pages_task_ended(const ReplayTask& t);

}  // namespace rwd
