// LastCpuReader and cpuid_on (engine/os/cpuid_query.h): the recorder answers a recorded
// thread's cpuid on the CPU that thread last ran on, read again at every cpuid from one open
// /proc/TID/stat.
#include "engine/os/cpuid_query.h"

#include <cpuid.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <vector>

using namespace rwd;

namespace {

/// The CPUs this thread may run on.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

/// Pins the calling thread to CPU `cpu`; false if the kernel refused.
bool pin_to(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof one, &one) == 0 && sched_getcpu() == cpu;
}

}  // namespace

TEST_CASE("one LastCpuReader follows its thread from CPU to CPU") {
  std::vector<int> cpus = allowed_cpus();
  REQUIRE(!cpus.empty());
  cpu_set_t was;
  REQUIRE(sched_getaffinity(0, sizeof was, &was) == 0);
  pid_t self = pid_t(syscall(SYS_gettid));
  LastCpuReader reader;
  // Every CPU, twice around: the same open file must give the CPU of each moment (with two
  // or more CPUs, a reader that kept its first answer fails here).
  for (int round = 0; round < 2; ++round)
    for (int c : cpus) {
      if (!pin_to(c)) continue;
      CHECK(reader.last_cpu(self) == c);
    }
  sched_setaffinity(0, sizeof was, &was);
  // Another thread's, through the same reader: it opens that thread's file.
  CHECK(reader.last_cpu(getpid()) >= 0);
  CHECK(reader.last_cpu(-5) == -1);
  // Moved, it keeps its file.
  LastCpuReader moved = std::move(reader);
  CHECK(moved.last_cpu(getpid()) >= 0);
}

TEST_CASE("cpuid_on answers as the CPU it names") {
  std::vector<int> cpus = allowed_cpus();
  REQUIRE(!cpus.empty());
  cpu_set_t was;
  REQUIRE(sched_getaffinity(0, sizeof was, &was) == 0);
  for (int c : cpus) {
    if (!pin_to(c)) continue;
    unsigned a, b, cx, d;
    __cpuid_count(1, 0, a, b, cx, d);
    sched_setaffinity(0, sizeof was, &was);
    CpuidResult r = cpuid_on(c, 1, 0);
    // Leaf 1 EBX bits 31-24: the initial APIC id of the CPU that ran it (Intel SDM, CPUID).
    CHECK((r.ebx >> 24) == (b >> 24));
    CHECK(r.eax == a);
  }
}
