#include "blocking.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include <algorithm>
#include <iterator>

namespace rwd {

namespace {
constexpr long kMayBlock[] = {SYS_read,
                              SYS_readv,
                              SYS_write,
                              SYS_writev,
                              SYS_recvfrom,
                              SYS_recvmsg,
                              SYS_sendto,
                              SYS_sendmsg,
                              SYS_sendmmsg,
                              SYS_accept,
                              SYS_accept4,
                              SYS_connect,
                              SYS_poll,
                              SYS_ppoll,
                              SYS_select,
                              SYS_pselect6,
                              SYS_epoll_wait,
                              SYS_epoll_pwait,
                              SYS_epoll_pwait2,
                              SYS_nanosleep,
                              SYS_clock_nanosleep,
                              SYS_wait4,
                              SYS_waitid,
                              SYS_pause,
                              SYS_rt_sigsuspend,
                              SYS_rt_sigtimedwait,
                              SYS_flock,
                              SYS_sched_yield,
                              SYS_splice,
                              SYS_tee,
                              SYS_sendfile,
                              SYS_open,
                              SYS_openat,
                              SYS_restart_syscall};
}  // namespace

bool syscall_may_block(const Registers& r) {
  long nr = long(r.orig_rax);
  if (nr == SYS_futex) {
    int op = int(r.rsi) & FUTEX_CMD_MASK;
    return op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET || op == FUTEX_LOCK_PI ||
           op == FUTEX_LOCK_PI2 || op == FUTEX_WAIT_REQUEUE_PI || op == FUTEX_WAKE_OP ||
           op == FUTEX_CMP_REQUEUE;
  }
  if (nr == SYS_fcntl) return r.rsi == F_SETLKW || r.rsi == F_OFD_SETLKW;
  return std::find(std::begin(kMayBlock), std::end(kMayBlock), nr) != std::end(kMayBlock);
}

}  // namespace rwd
