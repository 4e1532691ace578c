// Running cpuid as a recorded thread would have (emulated_insns.h): on the CPU that thread
// ran on, whose APIC id (leaf 1 EBX bits 31-24, leaf 0xB EDX) and topology leaves differ from
// one CPU to the next.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace rwd {

/// What one cpuid gave: the four 32-bit registers (Intel SDM, CPUID).
struct CpuidResult {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

/// The CPU that a thread last ran on (/proc/TID/stat, field 39 "processor": proc(5)), asked
/// many times (each cpuid of a recorded thread; ld.so makes 41 at every program start): the
/// file is opened once and read again from its start with pread(2), which makes the kernel
/// write it anew (a seq_file). Opens the file again when
/// asked for another tid (a thread that took its process's pid at an execve).
class LastCpuReader {
 public:
  LastCpuReader() = default;
  ~LastCpuReader();
  LastCpuReader(const LastCpuReader&) = delete;
  LastCpuReader& operator=(const LastCpuReader&) = delete;
  LastCpuReader(LastCpuReader&& o) noexcept : tid_(o.tid_), fd_(o.fd_) { o.fd_ = -1; }
  LastCpuReader& operator=(LastCpuReader&& o) noexcept;
  /// The CPU that `tid` last ran on, or -1 when it cannot be read.
  int last_cpu(pid_t tid);

 private:
  pid_t tid_ = 0;
  int fd_ = -1;
};

/// cpuid leaf `leaf`, subleaf `subleaf`, run on CPU `cpu`: the calling thread moves there for
/// it (sched_setaffinity(2)) and back to its former mask. Where it cannot (cpu < 0, not
/// allowed), on the CPU the caller runs on. Results are kept per CPU, leaf and subleaf (the
/// first 4,096 asked), so that a program that asks again costs no migration.
CpuidResult cpuid_on(int cpu, uint32_t leaf, uint32_t subleaf);

}  // namespace rwd
