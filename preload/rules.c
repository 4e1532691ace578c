/* The syscalls librewind_preload.so makes without a ptrace stop, and how (rules.h). Every
 * other syscall is traced. man 2 of each for its out-parameter. */
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

#define NO_OUT(fd, blocks, when) \
  { {1, -1, 0, 0, 0, 0, 0, fd, blocks, 0}, when }
#define FIXED(arg, size, fd, blocks, when) \
  { {1, arg, size, 0, 0, 0, 0, fd, blocks, 0}, when }
/* The result is the number of bytes written at `arg` (at most argument `size_arg`). */
#define BY_RESULT(arg, size_arg, fd, blocks, when) \
  { {1, arg, 0, size_arg, 1, 1, 0, fd, blocks, 0}, when }
/* The result is the number of `elem`-byte items written (epoll_wait's events). */
#define ITEMS_BY_RESULT(arg, size_arg, elem, fd, blocks, when) \
  { {1, arg, 0, size_arg, elem, elem, 0, fd, blocks, 0}, when }
/* Data scattered over an iovec array (enum vector_kind). */
#define VECTOR(kind, fd, blocks, when) \
  { {1, -1, 0, 0, 0, 0, 0, fd, blocks, 0, kind}, when }
/* An array the kernel reads and writes back whole (poll's). */
#define IN_OUT_ARRAY(arg, size_arg, elem, fd, blocks, when) \
  { {1, arg, 0, size_arg, elem, 0, 1, fd, blocks, 0}, when }

static const struct row kRules[] = {
    /* Identity and clocks. */
    [SYS_getpid] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_getppid] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_gettid] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_getuid] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_geteuid] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_getgid] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_getegid] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_getpgrp] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_clock_gettime] = FIXED(1, 16, ANY_FD, NEVER, ARG1_SET),
    [SYS_gettimeofday] = FIXED(0, 16, ANY_FD, NEVER, TV_ONLY),
    /* Reading the file system. */
    [SYS_close] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_lseek] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_access] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_faccessat] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_faccessat2] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_fstat] = FIXED(1, sizeof(struct stat), ANY_FD, NEVER, ALWAYS),
    [SYS_stat] = FIXED(1, sizeof(struct stat), ANY_FD, NEVER, ALWAYS),
    [SYS_lstat] = FIXED(1, sizeof(struct stat), ANY_FD, NEVER, ALWAYS),
    [SYS_newfstatat] = FIXED(2, sizeof(struct stat), ANY_FD, NEVER, ALWAYS),
    [SYS_statx] = FIXED(4, 256, ANY_FD, NEVER, ALWAYS),
    [SYS_statfs] = FIXED(1, sizeof(struct statfs), ANY_FD, NEVER, ALWAYS),
    [SYS_fstatfs] = FIXED(1, sizeof(struct statfs), ANY_FD, NEVER, ALWAYS),
    [SYS_getdents64] = BY_RESULT(1, 2, ANY_FD, NEVER, ALWAYS),
    [SYS_readlink] = BY_RESULT(1, 2, ANY_FD, NEVER, ALWAYS),
    [SYS_readlinkat] = BY_RESULT(2, 3, ANY_FD, NEVER, ALWAYS),
    [SYS_getcwd] = BY_RESULT(0, 1, ANY_FD, NEVER, ALWAYS),
    [SYS_listxattr] = BY_RESULT(1, 2, ANY_FD, NEVER, ALWAYS),
    [SYS_llistxattr] = BY_RESULT(1, 2, ANY_FD, NEVER, ALWAYS),
    [SYS_getxattr] = BY_RESULT(2, 3, ANY_FD, NEVER, ALWAYS),
    [SYS_lgetxattr] = BY_RESULT(2, 3, ANY_FD, NEVER, ALWAYS),
    /* Opening: a FIFO's open waits for the other end (OPEN_FLAGS decides). */
    [SYS_openat] = NO_OUT(ANY_FD, MAY_BLOCK, OPEN_FLAGS),
    /* Reading and writing: on anything but a regular file they may wait. */
    [SYS_read] = BY_RESULT(1, 2, ANY_FD, UNLESS_REGULAR, ALWAYS),
    [SYS_write] = NO_OUT(NOT_OUTPUT, UNLESS_REGULAR, ALWAYS),
    [SYS_writev] = NO_OUT(NOT_OUTPUT, UNLESS_REGULAR, ALWAYS),
    [SYS_pread64] = BY_RESULT(1, 2, REGULAR_FILE, NEVER, ALWAYS),
    [SYS_pwrite64] = NO_OUT(REGULAR_NOT_OUTPUT, NEVER, ALWAYS),
    [SYS_readv] = VECTOR(IOV_READ, ANY_FD, UNLESS_REGULAR, ALWAYS),
    [SYS_preadv] = VECTOR(IOV_READ, REGULAR_FILE, NEVER, ALWAYS),
    [SYS_pwritev] = NO_OUT(REGULAR_NOT_OUTPUT, NEVER, ALWAYS),
    [SYS_recvfrom] = BY_RESULT(1, 2, ANY_FD, MAY_BLOCK, ARG4_NULL), /* no source address */
    [SYS_recvmsg] = VECTOR(MSG_READ, ANY_FD, MAY_BLOCK, ALWAYS),    /* hook.c: no control data */
    [SYS_sendto] = NO_OUT(NOT_OUTPUT, MAY_BLOCK, ALWAYS),
    [SYS_sendmsg] = NO_OUT(NOT_OUTPUT, MAY_BLOCK, ALWAYS), /* reads the header, writes nothing */
    /* Waiting for events. */
    [SYS_poll] = IN_OUT_ARRAY(0, 1, 8, ANY_FD, MAY_BLOCK, ALWAYS), /* struct pollfd */
    [SYS_ppoll] = IN_OUT_ARRAY(0, 1, 8, ANY_FD, MAY_BLOCK, PPOLL_PLAIN),
    [SYS_epoll_wait] = ITEMS_BY_RESULT(1, 2, 12, ANY_FD, MAY_BLOCK, ALWAYS),
    [SYS_epoll_pwait] = ITEMS_BY_RESULT(1, 2, 12, ANY_FD, MAY_BLOCK, ARG4_NULL), /* no mask */
    [SYS_futex] = NO_OUT(ANY_FD, MAY_BLOCK, FUTEX_KNOWN),
    /* On regular files only (a buffered fstat decides). */
    [SYS_flistxattr] = BY_RESULT(1, 2, REGULAR_FILE, NEVER, ALWAYS),
    [SYS_fgetxattr] = BY_RESULT(2, 3, REGULAR_FILE, NEVER, ALWAYS),
    [SYS_fsetxattr] = NO_OUT(REGULAR_FILE, NEVER, ALWAYS),
    [SYS_fadvise64] = NO_OUT(REGULAR_FILE, NEVER, ALWAYS),
    [SYS_copy_file_range] = NO_OUT(REGULAR_FILE, NEVER, NO_OFFSETS),
    [SYS_ftruncate] = NO_OUT(REGULAR_FILE, NEVER, ALWAYS),
    [SYS_fsync] = NO_OUT(REGULAR_FILE, NEVER, ALWAYS),
    [SYS_fdatasync] = NO_OUT(REGULAR_FILE, NEVER, ALWAYS),
    /* Changes to the file system: no out-parameter. */
    [SYS_utimensat] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_unlink] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_unlinkat] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_rmdir] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_mkdir] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_mkdirat] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_rename] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_renameat] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_renameat2] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_link] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_linkat] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_symlink] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_symlinkat] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_chmod] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_fchmod] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_fchmodat] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_chown] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_fchown] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_lchown] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_fchownat] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_truncate] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_setxattr] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_lsetxattr] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_removexattr] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_lremovexattr] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    [SYS_umask] = NO_OUT(ANY_FD, NEVER, ALWAYS),
    /* Limits and the system. Reading limits only: a new limit stays traced (the kernel's
     * behaviour in replay can depend on it). */
    [SYS_getrlimit] = FIXED(1, 16, ANY_FD, NEVER, ALWAYS),
    [SYS_prlimit64] = FIXED(3, 16, ANY_FD, NEVER, ARG2_NULL),
    [SYS_getrusage] = FIXED(1, 144, ANY_FD, NEVER, ALWAYS),
    [SYS_sysinfo] = FIXED(0, 112, ANY_FD, NEVER, ALWAYS),
    [SYS_uname] = FIXED(0, 390, ANY_FD, NEVER, ALWAYS),
    [SYS_getrandom] = BY_RESULT(0, 1, ANY_FD, NEVER, NONBLOCK_RANDOM),
    /* By request or command. */
    [SYS_ioctl] = NO_OUT(ANY_FD, NEVER, IOCTL_KNOWN),
    [SYS_fcntl] = NO_OUT(ANY_FD, NEVER, FCNTL_KNOWN),
};

/* ioctl requests that are buffered (man 2 ioctl_tty, ioctl_fionread, ioctl_ficlone), with the
 * size of what the kernel writes at argument 2 (0: nothing); the sizes are the engine's
 * (engine/arch/syscall_table.cpp, ioctl_output_size). */
static const struct {
  unsigned long request;
  unsigned short size;
  unsigned char fd_check;
} kIoctls[] = {
    {TCGETS, 36, ANY_FD}, /* struct termios, the kernel's layout */
    {TIOCGWINSZ, 8, ANY_FD}, {TIOCGPGRP, 4, ANY_FD},
    {FIONREAD, 4, ANY_FD},   {FICLONE, 0, REGULAR_FILE},
};

/* fcntl commands that are buffered (man 2 fcntl): none waits (F_SETLKW does: traced), and
 * only F_GETLK and F_OFD_GETLK write memory (a struct flock at argument 2). */
static const struct {
  int cmd;
  unsigned short size;
} kFcntls[] = {
    {F_DUPFD, 0},
    {F_DUPFD_CLOEXEC, 0},
    {F_GETFD, 0},
    {F_SETFD, 0},
    {F_GETFL, 0},
    {F_SETFL, 0},
    {F_SETLK, 0},
    {F_OFD_SETLK, 0},
    {F_GETLK, sizeof(struct flock)},
    {F_OFD_GETLK, sizeof(struct flock)},
    {F_GETPIPE_SZ, 0},
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
