/* The syscalls librewind_preload.so makes without a ptrace stop, and how (rules.h). Every
 * other syscall is traced. man 2 of each for its out-parameter; the table itself is declared in
 * engine/arch/syscalls.py and generated into the build tree. */
#define _GNU_SOURCE
#include "rules.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/futex.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>

/* Conditions on a call's arguments (condition_holds), and the calls whose rule depends on a
 * request or command argument. */
enum condition {
  ALWAYS,
  ARG1_SET,
  TV_ONLY,
  OPEN_FLAGS,
  NO_OFFSETS,
  ARG2_NULL,
  ARG4_NULL,
  PPOLL_PLAIN,
  NONBLOCK_RANDOM,
  IOCTL_KNOWN, /* by request: kIoctls */
  FCNTL_KNOWN, /* by command: kFcntls */
  FUTEX_KNOWN, /* by operation: wait and wake */
};

struct row {
  struct out_rule rule;
  unsigned char when; /* enum condition */
};

/* By syscall number: the rows tools/gen_syscalls.py writes from the one declaration,
 * engine/arch/syscalls.py (its `buffer=` fields). */
static const struct row kRules[] = {
#include "preload_rules.inc"
};

/* ioctl requests that are buffered (man 2 ioctl_tty, ioctl_fionread, ioctl_ficlone), with the
 * size of what the kernel writes at argument 2 (0: nothing) and the files they are buffered
 * on; declared with the engine's sizes in engine/arch/syscalls.py (IOCTLS). */
static const struct {
  unsigned long request;
  unsigned short size;
  unsigned char fd_check;
} kIoctls[] = {
#include "preload_ioctls.inc"
};

/* fcntl commands that are buffered (man 2 fcntl), with the size of what the kernel writes at
 * argument 2 (0: nothing); declared with the engine's sizes in engine/arch/syscalls.py
 * (FCNTLS). None waits (F_SETLKW does: traced), and only F_GETLK and F_OFD_GETLK write
 * memory: the struct flock at argument 2, which the kernel reads first (the lock asked
 * about), so that the caller's goes into the record before the call (in_out). */
static const struct {
  int cmd;
  unsigned short size;
} kFcntls[] = {
#include "preload_fcntls.inc"
};

int rwd_may_buffer(long nr) {
  return nr >= 0 && (unsigned long)nr < sizeof kRules / sizeof kRules[0] &&
         kRules[nr].rule.buffered;
}

/* Whether a call with arguments `a` may be buffered under `when`. */
static int condition_holds(const long* a, int when) {
  switch (when) {
    case ARG1_SET: /* clock_gettime without a result pointer: traced, it fails the same */
      return a[1] != 0;
    case TV_ONLY: /* gettimeofday with a timezone too: traced */
      return a[0] != 0 && a[1] == 0;
    case NO_OFFSETS: /* copy_file_range updating no offsets: nothing written to memory */
      return a[1] == 0 && a[3] == 0;
    case ARG2_NULL: /* prlimit64 that only reads the limit */
      return a[2] == 0;
    case PPOLL_PLAIN: {
      /* ppoll without a signal mask, waiting forever (no timeout) or not at all (a zero
       * one): then the kernel writes nothing but the array. A timeout left to run is written
       * back with the time remaining (fs/select.c, poll_select_finish): traced. */
      if (a[3] != 0) return 0;
      const struct timespec* tmo = (const struct timespec*)a[2];
      return tmo == 0 || (tmo->tv_sec == 0 && tmo->tv_nsec == 0);
    }
    case ARG4_NULL: /* recvfrom without a source address, epoll_pwait without a mask */
      return a[4] == 0;
    case NONBLOCK_RANDOM: /* getrandom that cannot wait for entropy (man 2 getrandom) */
      return (a[2] & GRND_NONBLOCK) || (a[2] & GRND_INSECURE) || a[1] <= 256;
    default:
      return 1;
  }
}

/* openat: only a FIFO's open waits (for the other end); O_CREAT|O_EXCL cannot open an existing
 * one, O_NONBLOCK and O_PATH opens do not wait. */
static int open_may_block(long flags) {
  if ((flags & O_CREAT) && (flags & O_EXCL)) return 0;
  return !(flags & (O_NONBLOCK | O_PATH));
}

const struct out_rule* rwd_rule_for(long nr, const long* a, struct out_rule* scratch) {
  if (!rwd_may_buffer(nr)) return 0;
  const struct row* r = &kRules[nr];
  *scratch = r->rule;
  switch (r->when) {
    case IOCTL_KNOWN:
      for (unsigned i = 0; i < sizeof kIoctls / sizeof kIoctls[0]; ++i)
        if ((unsigned long)a[1] == kIoctls[i].request) {
          scratch->arg = kIoctls[i].size ? 2 : -1;
          scratch->size = kIoctls[i].size;
          scratch->fd_check = kIoctls[i].fd_check;
          return scratch;
        }
      return 0;
    case FCNTL_KNOWN:
      for (unsigned i = 0; i < sizeof kFcntls / sizeof kFcntls[0]; ++i)
        if ((int)a[1] == kFcntls[i].cmd) {
          scratch->arg = kFcntls[i].size ? 2 : -1;
          scratch->size = kFcntls[i].size;
          scratch->in_out = kFcntls[i].size != 0;
          return scratch;
        }
      return 0;
    case FUTEX_KNOWN: {
      /* Waits and wakes, private or shared: they read the futex word, never write it
       * (FUTEX_WAKE_OP and the requeue and PI operations do: traced). */
      int op = (int)a[1] & FUTEX_CMD_MASK;
      if (op == FUTEX_WAKE || op == FUTEX_WAKE_BITSET) {
        scratch->blocks = NEVER;
        return scratch;
      }
      return op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET ? scratch : 0;
    }
    case OPEN_FLAGS:
      scratch->blocks = open_may_block(a[2]) ? MAY_BLOCK : NEVER;
      scratch->unarmed_ok = (a[2] & O_ACCMODE) == O_RDONLY && !(a[2] & O_CREAT);
      return scratch;
    default:
      return condition_holds(a, r->when) ? scratch : 0;
  }
}
