// A process's end as a whole: exit_group(2), or a signal whose default action ends it
// (signal(7)). Once the recorder lets the call run or delivers the signal, the kernel sends
// SIGKILL to every other thread of the process, which ends each wherever it is. A thread may
// still report a stop the kernel queued before that (a wait woken just before, a blocked call
// interrupted by its desched signal), which the recorder takes from waitpid after the end's
// event: waitpid reports the recorder's own child, the main thread, first. Recorded, such a
// stop would be an event that replay cannot reach: its exit_group or signal kills the
// thread's copy where its last event left it (replay/group_end.cpp). So those threads are
// held where they stopped, without events, until the kill ends them; their Exit events
// follow as for every end.
#include <sys/wait.h>

#include "engine/record/record_session.h"

namespace rwd {

void RecordSession::start_group_exit(RecordTask& t) {
  group(t).exiting = t.tid;
}

bool RecordSession::hold_during_group_exit(RecordTask& t, int status) {
  auto it = groups_.find(t.pid);
  if (it == groups_.end() || it->second.exiting == 0) return false;
  ThreadGroup& g = it->second;
  if (t.tid != g.exiting) {
    g.held_stops.emplace_back(t.tid, status);  // SIGKILL ends its stop
    return true;
  }
  // The exiting thread stopped instead of ending: its exit_group did not kill the process
  // (a filter of the program refused it). The others go on from their stops.
  g.exiting = 0;
  for (auto& held : g.held_stops) released_stops_.push_back(held);
  g.held_stops.clear();
  return false;
}

}  // namespace rwd
