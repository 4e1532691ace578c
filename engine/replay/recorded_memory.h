// Writing memory the trace recorded back into a replayed task.
#pragma once

#include <sys/types.h>

#include <vector>

#include "engine/os/tracee_memory.h"
#include "engine/trace/event.h"

namespace rwd {

/// Writes the recorded bytes of `region` at their address in task `tid` (read-only private
/// pages included, as /proc/PID/mem allows). Throws SystemError.
inline void write_recorded(pid_t tid, const MemoryRegion& region) {
  write_memory(tid, region.addr, region.bytes.data(), region.bytes.size());
}

/// Writes each of `regions` (an event's memory), in order, into task `tid`. Throws SystemError.
inline void write_recorded(pid_t tid, const std::vector<MemoryRegion>& regions) {
  for (const MemoryRegion& region : regions) write_recorded(tid, region);
}

}  // namespace rwd
