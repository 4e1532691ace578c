#include "adapter/dap/event_index.h"

#include "engine/arch/syscall_table.h"
#include "engine/trace/event_text.h"
#include "engine/trace/trace_reader.h"

namespace rwd {

EventIndex::EventIndex(const std::string& dir) {
  TraceReader reader(dir);
  EventOriginTracker origins;
  while (auto e = reader.next()) {
    EventEntry entry;
    entry.number = e->number;
    entry.tid = e->tid;
    entry.kind = e->kind;
    if (e->kind == EventKind::Syscall || e->kind == EventKind::SyscallEntry)
      entry.syscall = syscall_name(e->syscallno());
    entry.text = describe_event(*e);
    entries_.push_back(std::move(entry));
    origins.add(*e);
  }
  for (size_t i = 0; i < entries_.size(); ++i) entries_[i].origin = origins.origins()[i];
  if (reader.last_event() > entries_.size()) {  // the End event, which next() keeps to itself
    EventEntry end;
    end.number = reader.last_event();
    end.kind = EventKind::End;
    end.text = "the end of the recording";
    entries_.push_back(end);
  }
}

const EventEntry* EventIndex::at(uint64_t number) const {
  if (number == 0 || number > entries_.size()) return nullptr;
  return &entries_[number - 1];
}

}  // namespace rwd
