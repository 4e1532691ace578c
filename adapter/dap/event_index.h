// The events of a trace in brief, read once, for the DAP custom request rewind/timeline (a
// timeline view lists the events around the current point).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "adapter/dap/event_origin.h"
#include "engine/trace/event.h"

namespace rwd {

/// One event as a timeline view shows it.
struct EventEntry {
  uint64_t number = 0;  ///< event number (from 1)
  pid_t tid = 0;        ///< recorded tid of its task
  EventKind kind = EventKind::Syscall;
  std::string syscall;  ///< Syscall and SyscallEntry events: the syscall's name
  std::string text;     ///< what it did (describe_event)
  EventOrigin origin = EventOrigin::Program;  ///< the program's, the loader's or rewind's
};

/// All events of a trace, read on construction (about a second for 100,000 events).
class EventIndex {
 public:
  /// Reads the trace at `dir`. Throws TraceError.
  explicit EventIndex(const std::string& dir);
  const std::vector<EventEntry>& entries() const { return entries_; }
  /// The entry of event `number`, nullptr when out of range.
  const EventEntry* at(uint64_t number) const;

 private:
  std::vector<EventEntry> entries_;
};

}  // namespace rwd
