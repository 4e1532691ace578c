// Running cpuid on a given CPU (cpuid_query.h).
#include "engine/os/cpuid_query.h"

#include <cpuid.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace rwd {

namespace {

/// Field 39 of the /proc/TID/stat line `buf` (NUL-terminated), or -1.
int processor_field(const char* buf) {
  // Field 2 (comm) is in parentheses and may hold spaces: count from the last ')'.
  const char* p = strrchr(buf, ')');
  if (!p) return -1;
  int field = 2;
  for (++p; *p && field < 39; ++p)
    if (*p == ' ') ++field;
  int cpu = -1;
  return sscanf(p, "%d", &cpu) == 1 ? cpu : -1;
}

int open_stat(pid_t tid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", int(tid));
  return ::open(path, O_RDONLY | O_CLOEXEC);
}

/// Reads the whole stat line of `fd` from its start, or returns -1.
int read_processor(int fd) {
  char buf[1024];
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return -1;
  buf[n] = 0;
  return processor_field(buf);
}

}  // namespace

LastCpuReader::~LastCpuReader() {
  if (fd_ >= 0) ::close(fd_);
}

LastCpuReader& LastCpuReader::operator=(LastCpuReader&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    tid_ = o.tid_;
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

int LastCpuReader::last_cpu(pid_t tid) {
  if (fd_ < 0 || tid != tid_) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = open_stat(tid);
    tid_ = tid;
    if (fd_ < 0) return -1;
  }
  return read_processor(fd_);
}

CpuidResult cpuid_on(int cpu, uint32_t leaf, uint32_t subleaf) {
  using Key = std::tuple<int, uint32_t, uint32_t>;
  static std::mutex mu;
  static std::map<Key, CpuidResult> cache;
  constexpr size_t kMaxCached = 4096;
  Key key{cpu, leaf, subleaf};
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  cpu_set_t was;
  bool moved = false;
  if (cpu >= 0 && cpu < CPU_SETSIZE && sched_getaffinity(0, sizeof was, &was) == 0 &&
      sched_getcpu() != cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    moved = sched_setaffinity(0, sizeof one, &one) == 0;
  }
  CpuidResult r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  bool there = sched_getcpu() == cpu;
  if (moved) sched_setaffinity(0, sizeof was, &was);
  if (there && cache.size() < kMaxCached) cache[key] = r;
  return r;
}

}  // namespace rwd
