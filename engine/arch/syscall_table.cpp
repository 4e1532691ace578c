#include "syscall_table.h"

#include <asm/ioctls.h>
#include <linux/fs.h>
#include <linux/sockios.h>
#include <sys/syscall.h>

#include <algorithm>
#include <iterator>

#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

/// The table, ordered by number (tools/gen_syscalls.py writes it from engine/arch/syscalls.py).
/// Everything not listed is unsupported and stops the recording with its name.
constexpr SyscallSpec kSpecs[] = {
#include "syscall_specs.inc"
};

struct NameEntry {
  int nr;
  const char* name;
};
/// Every syscall's name: the kernel header's and those newer than it.
constexpr NameEntry kNames[] = {
#include "syscall_names.inc"
};

/// An ioctl request known by name: bytes the kernel writes at argument 2.
struct IoctlEntry {
  unsigned long request;
  uint32_t size;
};
constexpr IoctlEntry kIoctls[] = {
#include "ioctl_sizes.inc"
};

/// An fcntl command rewind knows: bytes the kernel writes at argument 2 on success.
struct FcntlEntry {
  long cmd;
  uint32_t size;
};
constexpr FcntlEntry kFcntls[] = {
#include "fcntl_sizes.inc"
};

}  // namespace

const SyscallSpec* syscall_spec(long nr) {
  auto it = std::lower_bound(std::begin(kSpecs), std::end(kSpecs), nr,
                             [](const SyscallSpec& s, long n) { return s.nr < n; });
  return it != std::end(kSpecs) && it->nr == nr ? &*it : nullptr;
}

bool syscall_has(long nr, SyscallFlag f) {
  const SyscallSpec* s = syscall_spec(nr);
  return s && s->has(f);
}

std::string syscall_name(long nr) {
  for (const auto& e : kNames)
    if (e.nr == nr) return e.name;
  if (nr == RWD_SYS_REGISTER_BUFFER) return "rewind_register_buffer";
  if (nr == RWD_SYS_DIVERGED) return "rewind_diverged";
  if (nr == RWD_SYS_PATCHED) return "rewind_patched";
  return "syscall_" + std::to_string(nr);
}

bool syscall_number_known(long nr) {
  for (const auto& e : kNames)
    if (e.nr == nr) return true;
  return false;
}

bool is_restart_result(int64_t result) {
  return result == -512 || result == -513 || result == -514 || result == -516;
}

long ioctl_output_size(unsigned long request) {
  // Legacy terminal requests have no size in their number (ioctl_tty(2)): by name.
  for (const auto& i : kIoctls)
    if (i.request == request) return long(i.size);
  unsigned dir = unsigned(request >> 30) & 3u;  // _IOC_DIRSHIFT, asm-generic/ioctl.h
  unsigned size = unsigned(request >> 16) & 0x3fffu;
  if (dir == 0 && (request >> 16) == 0) return -1;  // no encoding: unknown legacy request
  return (dir & 2u) ? long(size) : 0;               // _IOC_READ: the kernel writes `size` bytes
}

long fcntl_output_size(long cmd) {
  for (const auto& f : kFcntls)
    if (f.cmd == cmd) return long(f.size);
  return -1;
}

}  // namespace rwd
