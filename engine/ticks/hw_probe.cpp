#include "hw_probe.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace rwd {

bool hardware_ticks_available(std::string* why) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.disabled = 1;
  int fd = int(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
  if (fd < 0) {
    if (why) *why = std::string("perf_event_open: ") + std::strerror(errno);
    return false;
  }
  ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  volatile uint64_t x = 0;
  for (int i = 0; i < 1000; ++i) x = x + uint64_t(i & 1 ? 1 : 2);
  ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  uint64_t count = 0;
  bool ok = read(fd, &count, sizeof count) == sizeof count && count >= 1000;
  close(fd);
  if (!ok && why) *why = "the branch counter opens but does not count";
  return ok;
}

}  // namespace rwd
