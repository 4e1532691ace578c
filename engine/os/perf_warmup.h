// The kernel's switch for per-task perf events, turned on ahead of a recording.
//
// The first per-task perf event opened while none exists on the machine costs 8-20 ms: the
// kernel turns on the scheduler hooks those events need (kernel/events/core.c, account_event:
// the perf_sched_events static key, then synchronize_rcu), and turns them off again about a
// second after the last one closes. The preload library's desched counter is such an event,
// opened by the program's first thread during its start, so every short recording paid it
// there (issue 29's start cost: `rewind record /bin/true` 25 ms against 1 ms natively).
// PerfSchedWarmup opens one disabled per-task event on rewind's own main thread from a
// helper thread, in parallel with the program's start, and holds it for the recording: the
// program's own open then finds the hooks on (or waits only for the rest of the switch).
#pragma once

#include <thread>

namespace rwd {

/// Holds a disabled software perf event on this process's main thread (a context-switch
/// counter that counts nothing) from construction to destruction, opened by a helper thread
/// with every signal blocked. Where the kernel refuses perf events it does nothing.
class PerfSchedWarmup {
 public:
  PerfSchedWarmup();
  ~PerfSchedWarmup();
  PerfSchedWarmup(const PerfSchedWarmup&) = delete;
  PerfSchedWarmup& operator=(const PerfSchedWarmup&) = delete;

 private:
  std::thread opener_;
  int fd_ = -1;  ///< written by opener_ before it ends; read after join()
};

}  // namespace rwd
