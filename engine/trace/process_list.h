// The processes of a trace, for `rewind ps` and `rewind ls`.
#pragma once

#include <string>
#include <vector>

#include "engine/trace/trace_meta.h"

namespace rwd {

/// The trace's processes in creation order: from `processes` when the recording ended
/// normally, otherwise rebuilt from the events (fork, exec and exit events) of an
/// interrupted trace, where processes still running at the end have ended == false.
/// Throws TraceError.
std::vector<ProcessInfo> trace_processes(const std::string& dir);

}  // namespace rwd
