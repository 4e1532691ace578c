// Rebuilding a task's address space after a replayed execve, from the Exec event.
#pragma once

#include <string>

#include "engine/replay/replay_task.h"
#include "engine/trace/event.h"

namespace rwd {

class TraceReader;

/// For a task stopped at the exit of a real execve in replay: replaces every mapping the
/// kernel made with the recorded ones (mapping the trace's saved files, so the host's dynamic
/// loader or libraries may differ), grows the stack to its recorded extent, writes the
/// recorded contents of writable memory (the initial stack with argv, envp, auxv and
/// AT_RANDOM) and sets the recorded registers. Throws DivergenceError or TraceError.
void restore_exec(ReplayTask& t, const Event& e, const TraceReader& trace);

}  // namespace rwd
