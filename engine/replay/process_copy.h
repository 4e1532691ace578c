// Copies of a replayed process, for checkpoints and diversions (DESIGN.md "Checkpoints and
// reverse execution"). fork(2) copies only the calling thread, so one thread forks (a
// syscall injected at its last `syscall` instruction) and every other thread is re-created in
// the copy by clone calls injected there, as rr does; each copied thread gets the registers,
// extended (FPU and vector) state, blocked-signal mask and per-thread kernel state
// (ThreadKernelState) its original has. Internal to engine/replay.
#pragma once

#include <sys/types.h>

#include <map>
#include <vector>

#include "engine/replay/replay_task.h"

namespace rwd {

/// Makes the stopped task `t` fork itself (a syscall injected at the `syscall` instruction
/// it waits at, or else its last) and returns the new process, stopped before running any
/// code with `t`'s registers (and its tid address and robust list, which fork does not copy),
/// at the same syscall entry when `t` waits at one. `t` is left as it was. Throws
/// DivergenceError.
ReplayTask fork_task(ReplayTask& t);

/// Copies the process whose live, stopped threads are `threads` (every live task of one
/// thread group) and returns the copy's tasks by the same recorded tids, each stopped before
/// running code in the state its original is in: a thread waiting at a syscall's entry
/// (ReplayTask::at_entry) waits at the same entry in the copy. The originals are left as they
/// were. The thread group's leader forks. Throws DivergenceError when it cannot (it has
/// ended, or has no known `syscall` instruction) or the copy does not come out as asked.
std::map<pid_t, ReplayTask> copy_process(const std::vector<ReplayTask*>& threads);

/// Copies the process whose live, stopped threads are `threads`, one that shares its parent's
/// memory (its first thread's vm_clone_flags), into the copy of that memory: a clone with
/// CLONE_VM (and whatever else the original shares) injected in `sharer`, a stopped task of
/// the copy of the process whose memory it shares, then its other threads cloned in it.
/// Returns the copy's tasks by recorded tid, each as copy_process leaves them (vm_parent:
/// `sharer`). Throws DivergenceError as copy_process does.
std::map<pid_t, ReplayTask> copy_memory_sharer(const std::vector<ReplayTask*>& threads,
                                               ReplayTask& sharer);

}  // namespace rwd
