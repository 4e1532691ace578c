#include "syscall_buffer.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstring>
#include <string>

#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"
#include "engine/trace/buffered_records.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {
/// A copy of descriptor `fd` of thread `tid` of process `pid` in this process (pidfd_open(2),
/// pidfd_getfd(2): Linux 5.6, and the tracer's ptrace access), or -1.
int copy_fd_of(pid_t pid, pid_t tid, int fd) {
  // The thread's own table, which may not be its process's after unshare(CLONE_FILES):
  // PIDFD_THREAD (Linux 6.9, pidfd_open(2)); before, the process's.
  constexpr unsigned kPidfdThread = O_EXCL;
  int pidfd = int(syscall(SYS_pidfd_open, tid, kPidfdThread));
  if (pidfd < 0) pidfd = int(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return -1;
  int copy = int(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  close(pidfd);
  return copy;
}
}  // namespace

int64_t SyscallBuffer::set_from_call(pid_t pid, pid_t tid, uint64_t buffer, uint64_t size,
                                     uint64_t lo, uint64_t hi, uint64_t features,
                                     uint64_t desched) {
  if (buffer == 0 || buffer % 4096 != 0 || size != RWD_BUFFER_SIZE || lo >= hi || hi - lo > 4096)
    return -EINVAL;
  bool counter = (features & RWD_FEATURE_DESCHED) != 0;
  if (counter && desched > INT_MAX) return -EINVAL;
  addr = buffer;
  defer_start = lo;
  defer_end = hi;
  desched_fd = -1;
  desched_copy.reset();
  if (!counter) return 0;
  int copy = copy_fd_of(pid, tid, int(desched));
  if (copy < 0) return 1;
  desched_fd = int(desched);
  desched_copy = std::shared_ptr<const int>(new int(copy), [](const int* p) {
    close(*p);
    delete p;
  });
  return 0;
}

namespace {
/// True when `sig` is pending for thread `tid` (its own or its process's: /proc/TID/status
/// SigPnd, ShdPnd, proc(5)).
bool signal_pending(pid_t tid, int sig) {
  ProcSignals s = read_proc_signals(tid);
  return ((s.pending | s.shared_pending) >> (sig - 1)) & 1;
}
}  // namespace

bool SyscallBuffer::settle_desched(pid_t tid) const {
  if (!desched_copy) return false;
  ioctl(*desched_copy, PERF_EVENT_IOC_DISABLE, 0);
  uint64_t flag = addr + offsetof(rwd_buffer_header, desched_armed);
  std::vector<uint8_t> b = read_memory(tid, flag, 4);
  if (b.size() != 4 || (b[0] | b[1] | b[2] | b[3]) == 0) return false;
  uint32_t armed = 0;
  write_memory(tid, flag, &armed, sizeof armed);
  // The kernel sends it from irq_work right after the switch (kernel/events/core.c,
  // perf_pending_irq): microseconds, unless the machine is very busy.
  for (int i = 0; i < 200 && !signal_pending(tid, RWD_DESCHED_SIGNAL); ++i) usleep(10);
  return true;
}

bool SyscallBuffer::rearm_desched(pid_t tid) const {
  if (!desched_copy || signal_pending(tid, RWD_DESCHED_SIGNAL)) return false;
  uint32_t armed = 1;
  write_memory(tid, addr + offsetof(rwd_buffer_header, desched_armed), &armed, sizeof armed);
  ioctl(*desched_copy, PERF_EVENT_IOC_ENABLE, 0);
  return true;
}

bool SyscallBuffer::is_desched_signal(int sig, const SigInfo& si) const {
  return desched_fd >= 0 && sig == RWD_DESCHED_SIGNAL && siginfo_code(si) == POLL_IN &&
         siginfo_fd(si) == desched_fd;
}

void SyscallBuffer::add_abort_mark(std::vector<uint8_t>& records) {
  if (aborted_nr < 0) return;
  rwd_record mark{RWD_RECORD_HEADER, uint32_t(aborted_nr), RWD_ABORTED};
  const auto* p = reinterpret_cast<const uint8_t*>(&mark);
  records.insert(records.end(), p, p + sizeof mark);
  aborted_nr = -1;
}

bool SyscallBuffer::must_not_stop_at(uint64_t rip) const {
  return rwd_in_buffered_call_code(rip, defer_start, defer_end);  // (0, 0) while addr is 0
}

std::pair<uint64_t, uint64_t> SyscallBuffer::digest_exclusion() const {
  return buffer_digest_exclusion(addr);
}

void SyscallBuffer::take_records(pid_t tid, std::vector<uint8_t>& out) const {
  if (!addr) return;
  uint32_t pos = 0;
  read_memory_exact(tid, addr, &pos, sizeof pos);
  if (pos == 0) return;
  if (pos > RWD_BUFFER_SIZE - RWD_DATA_OFFSET) pos = RWD_BUFFER_SIZE - RWD_DATA_OFFSET;
  const size_t start = out.size();
  out.resize(start + pos);
  try {
    read_memory_exact(tid, addr + RWD_DATA_OFFSET, out.data() + start, pos);
  } catch (...) {
    out.resize(start);  // the caller's earlier records stay as they were
    throw;
  }
  uint32_t zero = 0;
  write_memory(tid, addr, &zero, sizeof zero);
}

std::string preload_library_path() {
  std::string dir = link_target("/proc/self/exe");
  if (dir.empty()) return "";
  dir.resize(dir.find_last_of('/') + 1);
  std::string lib = dir + "librewind_preload.so";
  return access(lib.c_str(), R_OK) == 0 ? lib : "";
}

std::vector<std::string> preload_environment(const std::vector<std::string>& env,
                                             const std::string& library,
                                             const std::vector<const struct stat*>& outputs,
                                             std::optional<dev_t> proc_dev) {
  std::vector<std::string> out;
  std::string preload = library;
  for (const auto& v : env) {
    if (v.rfind("LD_PRELOAD=", 0) == 0) {
      std::string old = v.substr(11);
      if (!old.empty()) preload += ":" + old;
    } else if (v.rfind("REWIND_OUTPUT_FILES=", 0) != 0 && v.rfind("REWIND_PROC_DEV=", 0) != 0) {
      out.push_back(v);
    }
  }
  out.push_back("LD_PRELOAD=" + preload);
  std::string files;
  for (const struct stat* st : outputs) {
    if (!files.empty()) files += ",";
    files += std::to_string(st->st_dev) + ":" + std::to_string(st->st_ino);
  }
  out.push_back("REWIND_OUTPUT_FILES=" + files);
  // A write into a procfs file may be one into /proc/PID/mem, which the recorder must see.
  if (proc_dev) out.push_back("REWIND_PROC_DEV=" + std::to_string(*proc_dev));
  return out;
}

std::optional<MemoryRegion> write_library_switch(pid_t tid, uint64_t at, int32_t value) {
  try {
    write_memory(tid, at, &value, sizeof value);
  } catch (const SystemError&) {
    return std::nullopt;
  }
  MemoryRegion m;
  m.addr = at;
  m.bytes.resize(sizeof value);
  std::memcpy(m.bytes.data(), &value, sizeof value);
  return m;
}

}  // namespace rwd
