#include "blocking.h"

#include <fcntl.h>
#include <linux/futex.h>

#include "engine/arch/syscall_table.h"

namespace rwd {

bool syscall_may_block(const Registers& r) {
  const SyscallSpec* spec = syscall_spec(long(r.orig_rax));
  if (!spec) return false;
  switch (spec->blocks) {
    case BlockRule::Never:
      return false;
    case BlockRule::UnlessRegular:  // the recorder does not look at the file: it may wait
    case BlockRule::MayBlock:
      return true;
    case BlockRule::FutexOp: {
      int op = int(r.rsi) & FUTEX_CMD_MASK;
      return op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET || op == FUTEX_LOCK_PI ||
             op == FUTEX_LOCK_PI2 || op == FUTEX_WAIT_REQUEUE_PI || op == FUTEX_WAKE_OP ||
             op == FUTEX_CMP_REQUEUE;
    }
    case BlockRule::FcntlLock:
      return r.rsi == F_SETLKW || r.rsi == F_OFD_SETLKW;
  }
  return false;
}

}  // namespace rwd
