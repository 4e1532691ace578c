// A tracee thread's CPU time, watched by the recorder: chaos mode's time slices also end after
// a random amount of the thread's own CPU time, not only of wall-clock ticks.
//
// Tick-measured slices alone depended on the machine: a thread that needs 1 ms of CPU ran to its
// end inside one slice wherever the timer ticked coarsely or the machine was loaded, and the races
// chaos mode exists to expose never showed. A software perf event counting the thread's task clock
// (perf_event_open(2), PERF_COUNT_SW_TASK_CLOCK, in nanoseconds) with a sample period of the slice
// length sends a signal (fcntl(2) F_SETOWN_EX, F_SETSIG, O_ASYNC) once the thread has run that
// long. It goes to the thread itself, as rr sends its time-slice signal: the thread stops for
// the recorder (ptrace's signal-delivery-stop) at once, where a signal to the recorder had to
// wait until the recorder was scheduled, then interrupt the thread, which ran on meanwhile. The
// recorder takes that signal away, never delivering it. A thread that blocks kSliceSignal
// would only hold it pending: its slices signal the recorder instead (checked at each start).
// The ticks still end a slice too: a thread waiting in a buffered syscall uses no CPU time, and
// must let the others run.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdint>

#include "engine/arch/siginfo.h"

namespace rwd {

/// The signal a TaskCpuClock sends when a slice's CPU time has run out: to the thread, or to
/// the recorder where the thread blocks it. SIGSTKFLT, as rr's time-slice signal: Linux raises
/// it nowhere on x86-64 and programs do not use it.
constexpr int kSliceSignal = SIGSTKFLT;

/// One thread's task-clock counter, owned by the recorder (move-only; closes its descriptor).
class TaskCpuClock {
 public:
  TaskCpuClock() = default;
  TaskCpuClock(const TaskCpuClock&) = delete;
  TaskCpuClock& operator=(const TaskCpuClock&) = delete;
  TaskCpuClock(TaskCpuClock&& o) noexcept : fd_(o.fd_), tid_(o.tid_), to_thread_(o.to_thread_) {
    o.fd_ = -1;
  }
  TaskCpuClock& operator=(TaskCpuClock&& o) noexcept;
  ~TaskCpuClock();

  /// Opens the counter of thread `tid`, which signals this process with kSliceSignal at each
  /// overflow until start() says otherwise. False (and the clock stays closed) where the
  /// kernel refuses: no software perf events (perf_event_paranoid 3, a seccomp filter), or no
  /// descriptors left.
  bool open(pid_t tid);
  bool is_open() const { return fd_ >= 0; }
  /// Counts from zero again and signals after `ns` more nanoseconds of the thread's CPU time
  /// (the kernel's least period is 10 us: kernel/events/core.c, perf_swevent_start_hrtimer):
  /// the thread itself when `to_thread`, else this process. False if the kernel refused.
  bool start(uint64_t ns, bool to_thread);
  /// Whether the signal `sig` with siginfo `si` that stopped the thread is this counter's
  /// (an I/O signal, POLL_IN, naming its descriptor: fcntl(2), F_SETSIG).
  bool is_slice_signal(int sig, const SigInfo& si) const;
  /// CPU time of the thread since the last start, in nanoseconds (0 if unreadable).
  uint64_t elapsed_ns() const;

 private:
  int fd_ = -1;
  pid_t tid_ = 0;
  bool to_thread_ = false;  ///< whom the overflow signals now (F_SETOWN_EX)
};

}  // namespace rwd
