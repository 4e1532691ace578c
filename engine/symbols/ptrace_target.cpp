#include <fcntl.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"
#include "engine/symbols/target.h"

namespace rwd {

std::vector<uint8_t> PtraceTarget::read_memory(uint64_t addr, size_t len) {
  return rwd::read_memory(pid_, addr, len);
}

Registers PtraceTarget::registers(pid_t tid) {
  Registers r{};
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &r) != 0)
    throw SystemError("PTRACE_GETREGS " + std::to_string(tid), errno);
  return r;
}

std::optional<user_fpregs_struct> PtraceTarget::fp_registers(pid_t tid) {
  user_fpregs_struct f{};
  if (ptrace(PTRACE_GETFPREGS, tid, nullptr, &f) != 0) return std::nullopt;
  return f;
}

std::vector<ProcMapping> PtraceTarget::mappings() {
  return read_proc_maps(pid_);
}

std::vector<uint8_t> PtraceTarget::auxv() {
  return read_proc_auxv(pid_);
}

}  // namespace rwd
