// The preload library's turns switch, kept true by the recorder (rewind_preload_abi.h,
// RWD_FEATURE_TURNS). A call that may block is buffered with the desched counter armed so
// that, when it waits, the recorder learns it and lets another task take the memory's turn
// (preload/README.md, "Calls that may block"). Where no other task takes those turns, nothing
// waits for the turn: the library then makes an open (which only a FIFO makes wait) as it is,
// without the counter's two ioctls and the signal mask's read around it. The recorder says
// which, as the memory of the events where it changes, so that replay writes the same at the
// same event and the library takes the same path there.
#include <sched.h>

#include <optional>

#include "engine/os/tracee_writes.h"
#include "engine/record/record_session.h"
#include "engine/record/syscall_buffer.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

void RecordSession::note_turns_switch(RecordTask& t, uint64_t buffer,
                                      std::vector<MemoryRegion>& memory) {
  AddressSpace& s = space(t);
  const uint64_t at = turns_switch_at(t.tid, buffer);
  if (!at) return;
  if (at != s.turns_switch) s.turns_value = RWD_TURNS_SHARED;  // the library's start value
  s.turns_switch = at;
  // Each registration says it again: threads made before the library started count too.
  const int32_t want = turn_task_count(s) == 1 ? RWD_TURNS_ALONE : RWD_TURNS_SHARED;
  if (want == s.turns_value) return;
  if (auto m = write_library_switch(t.tid, at, want)) {
    s.turns_value = want;
    memory.push_back(std::move(*m));
  }
}

int32_t RecordSession::turns_at_clone(RecordTask& t, const CloneArgs& args, pid_t child,
                                      bool copies_turns, Event& e) {
  AddressSpace& s = space(t);
  if (!s.turns_switch) return RWD_TURNS_SHARED;
  const int32_t before = s.turns_value;
  const bool vfork = (args.flags & CLONE_VFORK) && args.shares_memory();
  // A vfork child runs alone on its parent's memory while the parent waits.
  if ((args.shares_memory() && !vfork) || copies_turns) {
    if (before != RWD_TURNS_SHARED) {
      if (auto m = write_library_switch(t.tid, s.turns_switch, RWD_TURNS_SHARED)) {
        s.turns_value = RWD_TURNS_SHARED;
        e.memory.push_back(std::move(*m));
      }
    }
  }
  if (args.shares_memory()) return s.turns_value;
  // A copy of the memory, made before this event's write: the child's switch holds `before`.
  // Where its turns say otherwise, its own write (one written region an event: where
  // fd_cache_at_clone took it, the child keeps the value it has).
  const int32_t want = copies_turns ? RWD_TURNS_SHARED : RWD_TURNS_ALONE;
  if (want == before || e.written_tid) return before;
  auto m = write_library_switch(child, s.turns_switch, want);
  if (!m) return before;
  e.written_tid = child;
  e.written_memory = std::move(*m);
  return want;
}

}  // namespace rwd
