// The stopped process that symbols, stacks and variables are read from: a live process under
// ptrace (PtraceTarget) or a point on a replay's timeline (TimelineTarget in engine/debugger).
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/arch/registers.h"
#include "engine/os/proc.h"

namespace rwd {

/// One stopped process, seen through the thread whose view is used for memory reads.
class Target {
 public:
  virtual ~Target() = default;
  /// Up to `len` bytes at `addr`; shorter when the range runs into an unmapped page.
  virtual std::vector<uint8_t> read_memory(uint64_t addr, size_t len) = 0;
  /// General registers of thread `tid` (a tid as the front end names it). Throws Error.
  virtual Registers registers(pid_t tid) = 0;
  /// The address space as /proc/PID/maps shows it.
  virtual std::vector<ProcMapping> mappings() = 0;
  /// The ELF auxiliary vector (getauxval(3)) as raw 16-byte pairs.
  virtual std::vector<uint8_t> auxv() = 0;
  /// Floating-point and SSE registers of thread `tid` (the FXSAVE layout of
  /// PTRACE_GETFPREGS, <sys/user.h>); nullopt when they cannot be read.
  virtual std::optional<user_fpregs_struct> fp_registers(pid_t tid) = 0;
};

/// The NUL-terminated string at `addr` in `t`'s memory: at most `max` bytes, cut where the
/// readable memory ends; "" when none of it can be read.
inline std::string c_string_at(Target& t, uint64_t addr, size_t max = 4096) {
  std::vector<uint8_t> b = t.read_memory(addr, max);
  return std::string(b.begin(), std::find(b.begin(), b.end(), uint8_t(0)));
}

/// A process stopped under ptrace by the calling thread (the tracer).
class PtraceTarget : public Target {
 public:
  explicit PtraceTarget(pid_t pid) : pid_(pid) {}
  std::vector<uint8_t> read_memory(uint64_t addr, size_t len) override;
  Registers registers(pid_t tid) override;
  std::vector<ProcMapping> mappings() override;
  std::vector<uint8_t> auxv() override;
  std::optional<user_fpregs_struct> fp_registers(pid_t tid) override;

 private:
  pid_t pid_;
};

}  // namespace rwd
