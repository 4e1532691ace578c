#include "clone_args.h"

#include <sys/syscall.h>

#include "engine/os/tracee_memory.h"

namespace rwd {

CloneArgs decode_clone_args(pid_t tid, const Registers& entry) {
  CloneArgs a;
  switch (long(entry.orig_rax)) {
    case SYS_vfork:
      a.flags = CLONE_VM | CLONE_VFORK;
      break;
    case SYS_clone:  // clone(flags, stack, parent_tid, child_tid, tls) on x86-64
      a.flags = entry.rdi;
      a.parent_tid = entry.rdx;
      a.child_tid = entry.r10;
      break;
    case SYS_clone3: {
      // struct clone_args starts: flags, pidfd, child_tid, parent_tid (all u64).
      uint64_t words[4] = {};
      read_memory_exact(tid, entry.rdi, words, sizeof words);
      a.flags = words[0];
      a.child_tid = words[2];
      a.parent_tid = words[3];
      break;
    }
    default:
      break;
  }
  return a;
}

}  // namespace rwd
