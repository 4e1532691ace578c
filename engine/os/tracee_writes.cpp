// Making a recorded tracer's writes to its tracee (tracee_writes.h).
#include "engine/os/tracee_writes.h"

#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <vector>

#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

int64_t result_of(long r) {
  return r == 0 ? 0 : -int64_t(errno);
}

/// Reads `n` bytes of `tracer` at `addr` into `out`; false where they cannot be read.
bool from_tracer(pid_t tracer, uint64_t addr, void* out, size_t n) {
  try {
    read_memory_exact(tracer, addr, out, n);
    return true;
  } catch (const SystemError&) {
    return false;
  }
}

}  // namespace

int debug_register_at(uint64_t addr) {
  constexpr uint64_t first = offsetof(struct user, u_debugreg);
  if (addr < first || addr >= first + 8 * sizeof(uint64_t) || (addr - first) % 8) return -1;
  return int((addr - first) / 8);
}

bool is_tracee_write(long request) {
  switch (request) {
    case PTRACE_POKETEXT:
    case PTRACE_POKEDATA:
    case PTRACE_POKEUSER:
    case PTRACE_SETREGS:
    case PTRACE_SETFPREGS:
    case PTRACE_SETREGSET:
      return true;
    default:
      return false;
  }
}

int64_t apply_tracee_write(pid_t tracer, pid_t tracee, long request, uint64_t addr, uint64_t data,
                           uint64_t* regset_len) {
  forget_registers();  // a write of registers; a write of memory is harmless to forget too
  switch (request) {
    case PTRACE_POKETEXT:
    case PTRACE_POKEDATA:
      return result_of(ptrace(__ptrace_request(request), tracee, addr, data));
    case PTRACE_POKEUSER:
      // Only the general registers: the debug registers past them would arm the CPU's
      // watchpoints in the tracee, which replay does not keep.
      if (addr >= sizeof(user_regs_struct) || addr % 8) return -EIO;
      return result_of(ptrace(PTRACE_POKEUSER, tracee, addr, data));
    case PTRACE_SETREGS: {
      user_regs_struct r;
      if (!from_tracer(tracer, data, &r, sizeof r)) return -EFAULT;
      return result_of(ptrace(PTRACE_SETREGS, tracee, nullptr, &r));
    }
    case PTRACE_SETFPREGS: {
      user_fpregs_struct r;
      if (!from_tracer(tracer, data, &r, sizeof r)) return -EFAULT;
      return result_of(ptrace(PTRACE_SETFPREGS, tracee, nullptr, &r));
    }
    case PTRACE_SETREGSET: {
      if (addr != NT_PRSTATUS && addr != NT_PRFPREG && addr != NT_X86_XSTATE) return -EINVAL;
      struct iovec io;
      if (!from_tracer(tracer, data, &io, sizeof io)) return -EFAULT;
      std::vector<uint8_t> set(std::min<uint64_t>(io.iov_len, kMaxRegsetBytes));
      if (!from_tracer(tracer, uint64_t(io.iov_base), set.data(), set.size())) return -EFAULT;
      struct iovec mine = {set.data(), set.size()};
      int64_t r = result_of(ptrace(PTRACE_SETREGSET, tracee, addr, &mine));
      if (regset_len) *regset_len = mine.iov_len;
      return r;
    }
    default:
      return -EIO;
  }
}

namespace {

// The int address the header word at `offset` of the buffer at `buffer` holds, or 0.
uint64_t header_address(pid_t tid, uint64_t buffer, size_t offset) {
  uint64_t at = 0;
  if (!buffer || !from_tracer(tid, buffer + offset, &at, sizeof at)) return 0;
  return at % 4 == 0 ? at : 0;
}

}  // namespace

uint64_t library_switch_at(pid_t tid, uint64_t buffer) {
  return header_address(tid, buffer, offsetof(rwd_buffer_header, library_switch));
}

uint64_t fd_cache_switch_at(pid_t tid, uint64_t buffer) {
  return header_address(tid, buffer, offsetof(rwd_buffer_header, fd_cache_switch));
}

uint64_t turns_switch_at(pid_t tid, uint64_t buffer) {
  return header_address(tid, buffer, offsetof(rwd_buffer_header, turns_switch));
}

uint64_t shared_files_at(pid_t tid, uint64_t buffer) {
  return header_address(tid, buffer, offsetof(rwd_buffer_header, shared_files));
}

bool switch_library_off_at(pid_t tid, uint64_t buffer) {
  const uint64_t at = library_switch_at(tid, buffer);
  if (!at) return false;
  const int32_t off = 0;
  try {
    write_memory(tid, at, &off, sizeof off);
  } catch (const SystemError&) {
    return false;
  }
  return true;
}

bool turns_library_off(long request) {
  return request == PTRACE_SYSCALL || request == PTRACE_SYSEMU;
}

bool library_off_at(pid_t tid, uint64_t buffer) {
  const uint64_t at = library_switch_at(tid, buffer);
  int32_t on = 1;
  return at && from_tracer(tid, at, &on, sizeof on) && on == 0;
}

}  // namespace rwd
