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

TEST_CASE("a mapping of a file names its saved copy, and a shared file its number") {
  Event e = syscall_event(SYS_mmap, 0x7ffff7fc3000);
  e.file = "libc.so.6-4";
  CHECK(describe_event(e) == "mmap = 0x7ffff7fc3000 [libc.so.6-4]");
  e.file = "wal.db-shm-7";
  e.shared_file = 2;
  CHECK(describe_event(e) == "mmap = 0x7ffff7fc3000 [wal.db-shm-7, shared file 2]");
  Event w = syscall_event(SYS_pwrite64, 6);
  w.shared_file = 2;
  w.written_memory.addr = 100;
  w.written_memory.bytes = {'b', 'e', 'f', 'o', 'r', 'e'};
  CHECK(describe_event(w) == "pwrite64 = 6 [shared file 2, 6 bytes at offset 100]");
  Event t = syscall_event(SYS_truncate, 0);
  t.shared_file = 2;
  t.written_memory.addr = 4096;
  CHECK(describe_event(t) == "truncate = 0 [shared file 2 now 4096 bytes]");
}
