// The kernel's per-task perf event switch, turned on ahead of a recording (perf_warmup.h).
#include "engine/os/perf_warmup.h"

#include <linux/perf_event.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace rwd {

PerfSchedWarmup::PerfSchedWarmup() {
  // The helper inherits this mask: it must take none of the recorder's signals (its timer's
  // SIGALRM interrupts the main thread's waitpid, and would be lost on the helper).
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const pid_t main_thread = getpid();
  try {
    opener_ = std::thread([this, main_thread] {
      perf_event_attr attr;
      std::memset(&attr, 0, sizeof attr);
      attr.size = sizeof attr;
      attr.type = PERF_TYPE_SOFTWARE;
      attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
      attr.disabled = 1;
      fd_ = int(syscall(SYS_perf_event_open, &attr, main_thread, -1, -1, PERF_FLAG_FD_CLOEXEC));
    });
  } catch (const std::system_error&) {  // no thread: the program's own open pays, as before
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

PerfSchedWarmup::~PerfSchedWarmup() {
  if (opener_.joinable()) opener_.join();
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace rwd
