// The one-line descriptions of events (rewind dump, rewind/timeline, the VS Code Timeline).
#include "engine/trace/event_text.h"

#include <sys/syscall.h>

#include <catch2/catch.hpp>

#include "engine/trace/event.h"

using namespace rwd;

namespace {
Event syscall_event(long nr, int64_t result) {
  Event e;
  e.kind = EventKind::Syscall;
  e.regs.orig_rax = uint64_t(nr);
  e.result = result;
  return e;
}
}  // namespace

TEST_CASE("a syscall's result: addresses in hex, counts in decimal, errors by name") {
  CHECK(describe_event(syscall_event(SYS_brk, 0x555555559000)) == "brk = 0x555555559000");
  CHECK(describe_event(syscall_event(SYS_mmap, 0x7ffff7fc3000)) == "mmap = 0x7ffff7fc3000");
  CHECK(describe_event(syscall_event(SYS_mremap, 0x7ffff7a00000)) == "mremap = 0x7ffff7a00000");
  CHECK(describe_event(syscall_event(SYS_mmap, -12)) == "mmap = -12 (ENOMEM)");
  CHECK(describe_event(syscall_event(SYS_munmap, 0)) == "munmap = 0");
  CHECK(describe_event(syscall_event(SYS_read, 4096)) == "read = 4096");
  CHECK(describe_event(syscall_event(SYS_openat, -2)) == "openat = -2 (ENOENT)");
}
