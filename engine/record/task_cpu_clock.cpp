// A tracee thread's task-clock counter (task_cpu_clock.h).
#include "engine/record/task_cpu_clock.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace rwd {

TaskCpuClock& TaskCpuClock::operator=(TaskCpuClock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    tid_ = o.tid_;
    to_thread_ = o.to_thread_;
    o.fd_ = -1;
  }
  return *this;
}

TaskCpuClock::~TaskCpuClock() {
  if (fd_ >= 0) ::close(fd_);
}

bool TaskCpuClock::open(pid_t tid) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = 1'000'000'000;  // none before the first start()
  // Overflows only while the thread runs its own code: where the recorder interrupts it.
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  int fd = int(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) return false;
  f_owner_ex owner{F_OWNER_PID, getpid()};
  if (fcntl(fd, F_SETOWN_EX, &owner) != 0 || fcntl(fd, F_SETSIG, kSliceSignal) != 0 ||
      fcntl(fd, F_SETFL, O_ASYNC) != 0) {
    ::close(fd);
    return false;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
  tid_ = tid;
  to_thread_ = false;
  return true;
}

bool TaskCpuClock::start(uint64_t ns, bool to_thread) {
  if (fd_ < 0) return false;
  if (to_thread != to_thread_) {
    f_owner_ex owner{to_thread ? F_OWNER_TID : F_OWNER_PID, to_thread ? tid_ : getpid()};
    if (fcntl(fd_, F_SETOWN_EX, &owner) != 0) return false;
    to_thread_ = to_thread;
  }
  // A new period also restarts the countdown to the next overflow (perf_event_period sets
  // period_left to 0, so the next start of the event's timer uses the full period). The count
  // is reset first: reset after the timer's restart, a thread that runs meanwhile would signal
  // with less than `ns` counted, and slice_over() would not see its slice as over.
  return ioctl(fd_, PERF_EVENT_IOC_RESET, 0) == 0 && ioctl(fd_, PERF_EVENT_IOC_PERIOD, &ns) == 0;
}

bool TaskCpuClock::is_slice_signal(int sig, const SigInfo& si) const {
  return fd_ >= 0 && sig == kSliceSignal && siginfo_code(si) == POLL_IN && siginfo_fd(si) == fd_;
}

uint64_t TaskCpuClock::elapsed_ns() const {
  uint64_t v = 0;
  if (fd_ < 0 || ::read(fd_, &v, sizeof v) != ssize_t(sizeof v)) return 0;
  return v;
}

}  // namespace rwd
