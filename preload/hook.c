/* The syscall hook: decides per call whether it can be buffered (its whole effect is a result
 * plus an out-parameter of known size, and it cannot block), performs it through
 * rwd_buffered_syscall and logs a record; anything else is made as a traced syscall. The
 * same code runs in record and in replay (only rwd_buffered_syscall's inside differs), so that
 * replay reaches the same memory and registers. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "preload.h"

int rwd_enabled;

/* Per-thread state. `busy` keeps a signal handler that runs inside the hook (a fault in the
 * user's buffer) from reusing the buffer: its syscalls are traced. */
struct rwd_thread {
  struct rwd_buffer_header* buf;
  int busy;
  int off;
};
static __thread struct rwd_thread self __attribute__((tls_model("initial-exec")));

static struct {
  uint64_t dev, ino;
  int set;
} outputs[2];

void rwd_set_output_file(int i, uint64_t dev, uint64_t ino) {
  outputs[i].dev = dev;
  outputs[i].ino = ino;
  outputs[i].set = 1;
}

int rwd_register_thread(void) {
  long p = rwd_traced_syscall(SYS_mmap, 0, RWD_BUFFER_SIZE, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p < 0 && p > -4096) {
    self.off = 1;
    return -1;
  }
  long r = rwd_traced_syscall(RWD_SYS_REGISTER_BUFFER, p, RWD_BUFFER_SIZE, (long)rwd_defer_start,
                              (long)rwd_defer_end, RWD_FEATURE_PAUSE, 0);
  if (r != 0) {
    rwd_traced_syscall(SYS_munmap, p, RWD_BUFFER_SIZE, 0, 0, 0, 0);
    self.off = 1;
    return -1;
  }
  self.buf = (struct rwd_buffer_header*)p;
  return 0;
}

static long traced(const long* c) {
  return rwd_traced_syscall(c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
}

static inline uint32_t align8(uint64_t n) {
  return (uint32_t)((n + 7) & ~7ull);
}

/* 1 if a record with `out_max` bytes of out-data fits (with room left for replay's end mark);
 * 0 when the buffer is full (the call is then traced, and the recorder empties it). The
 * record itself is placed by rwd_buffered_syscall, at the position it finds then. */
static int has_room(uint64_t out_max) {
  uint64_t room = RWD_BUFFER_SIZE - RWD_DATA_OFFSET;
  return out_max <= room / 4 &&
         self.buf->pos + RWD_RECORD_HEADER + align8(out_max) + RWD_RECORD_HEADER <= room;
}

/* Makes call `c` with its out-parameter (argument `out_arg`, or -1 for none) pointed at the
 * record's data; the record keeps the first `keep_max` bytes the kernel wrote (`result` bytes
 * at most when keep_is_result), which are copied to `to_user` unless it is 0. Returns the
 * result. The record is placed, committed and copied out inside rwd_buffered_syscall, where
 * the recorder never stops: once it returns, the record may already belong to an event. */
static long buffered(const long* c, int out_arg, uint64_t keep_max, int keep_is_result,
                     void* to_user) {
  long call[7];
  for (int i = 0; i < 7; ++i) call[i] = c[i];
  struct rwd_commit how = {out_arg >= 0 ? keep_max : 0, (uint64_t)keep_is_result, to_user, out_arg};
  return rwd_buffered_syscall(call, self.buf, &how);
}

/* The file type and identity of fd, through a buffered fstat (first 32 bytes of struct stat:
 * st_dev, st_ino, st_nlink, st_mode). -1 when fstat fails or the buffer is full. */
static int fd_kind(long fd, uint64_t* dev, uint64_t* ino) {
  if (!has_room(sizeof(struct stat))) return -1;
  long c[7] = {SYS_fstat, fd, 0, 0, 0, 0, 0};
  /* st_dev, st_ino, st_nlink, st_mode: the first 32 bytes, copied out of the record. */
  uint64_t st[4];
  long r = buffered(c, 1, sizeof st, 0, st);
  if (r != 0) return -1;
  *dev = st[0];
  *ino = st[1];
  return (int)(st[3] & S_IFMT);
}

static int is_output(uint64_t dev, uint64_t ino) {
  for (int i = 0; i < 2; ++i)
    if (outputs[i].set && outputs[i].dev == dev && outputs[i].ino == ino) return 1;
  return 0;
}

/* How a call is buffered: its out-parameter (which argument, its size, fixed or the count in
 * argument `size_arg`, and whether the result says how much was written), which file
 * descriptors it is limited to, and any condition on its arguments. */
enum fd_check { ANY_FD, REGULAR_FILE, REGULAR_NOT_OUTPUT };
enum condition {
  ALWAYS,
  ARG1_SET,
  TV_ONLY,
  OPEN_CANNOT_BLOCK,
  NO_OFFSETS,
  ARG2_NULL,
  NONBLOCK_RANDOM,
  IOCTL_KNOWN, /* by request: kIoctls */
  FCNTL_KNOWN, /* by command: kFcntls */
};
struct out_rule {
  unsigned char buffered; /* 0: always traced */
  signed char arg;        /* -1: no out-parameter */
  unsigned short size;    /* fixed size in bytes, or 0 */
  unsigned char size_arg; /* argument holding the capacity, when size is 0 */
  unsigned char by_result;
  unsigned char fd_check; /* enum fd_check, on argument 0 */
  unsigned char when;     /* enum condition */
};

#define NO_OUT(...) \
  { 1, -1, 0, 0, 0, __VA_ARGS__ }
#define FIXED(arg, size, ...) \
  { 1, arg, size, 0, 0, __VA_ARGS__ }
#define BY_RESULT(arg, size_arg, ...) \
  { 1, arg, 0, size_arg, 1, __VA_ARGS__ }

/* The syscalls the library makes without a ptrace stop; every other one is traced. None may
 * block (the recorder could not run another task meanwhile). man 2 of each for its
 * out-parameter. ioctl and fcntl are buffered for some requests only (kIoctls, kFcntls). */
static const struct out_rule kRules[] = {
    [SYS_getpid] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_getppid] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_gettid] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_getuid] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_geteuid] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_getgid] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_getegid] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_getpgrp] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_close] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_lseek] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_access] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_faccessat] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_faccessat2] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_clock_gettime] = FIXED(1, 16, ANY_FD, ARG1_SET),
    [SYS_gettimeofday] = FIXED(0, 16, ANY_FD, TV_ONLY),
    [SYS_fstat] = FIXED(1, sizeof(struct stat), ANY_FD, ALWAYS),
    [SYS_stat] = FIXED(1, sizeof(struct stat), ANY_FD, ALWAYS),
    [SYS_lstat] = FIXED(1, sizeof(struct stat), ANY_FD, ALWAYS),
    [SYS_newfstatat] = FIXED(2, sizeof(struct stat), ANY_FD, ALWAYS),
    [SYS_statx] = FIXED(4, 256, ANY_FD, ALWAYS),
    [SYS_statfs] = FIXED(1, sizeof(struct statfs), ANY_FD, ALWAYS),
    [SYS_fstatfs] = FIXED(1, sizeof(struct statfs), ANY_FD, ALWAYS),
    [SYS_getdents64] = BY_RESULT(1, 2, ANY_FD, ALWAYS),
    [SYS_read] = BY_RESULT(1, 2, REGULAR_FILE, ALWAYS),
    [SYS_pread64] = BY_RESULT(1, 2, REGULAR_FILE, ALWAYS),
    [SYS_write] = NO_OUT(REGULAR_NOT_OUTPUT, ALWAYS),
    [SYS_pwrite64] = NO_OUT(REGULAR_NOT_OUTPUT, ALWAYS),
    [SYS_openat] = NO_OUT(ANY_FD, OPEN_CANNOT_BLOCK),
    [SYS_readlink] = BY_RESULT(1, 2, ANY_FD, ALWAYS),
    [SYS_readlinkat] = BY_RESULT(2, 3, ANY_FD, ALWAYS),
    [SYS_getcwd] = BY_RESULT(0, 1, ANY_FD, ALWAYS),
    [SYS_flistxattr] = BY_RESULT(1, 2, REGULAR_FILE, ALWAYS),
    [SYS_fgetxattr] = BY_RESULT(2, 3, REGULAR_FILE, ALWAYS),
    [SYS_fsetxattr] = NO_OUT(REGULAR_FILE, ALWAYS),
    [SYS_listxattr] = BY_RESULT(1, 2, ANY_FD, ALWAYS),
    [SYS_llistxattr] = BY_RESULT(1, 2, ANY_FD, ALWAYS),
    [SYS_getxattr] = BY_RESULT(2, 3, ANY_FD, ALWAYS),
    [SYS_lgetxattr] = BY_RESULT(2, 3, ANY_FD, ALWAYS),
    [SYS_setxattr] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_lsetxattr] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_removexattr] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_lremovexattr] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_fadvise64] = NO_OUT(REGULAR_FILE, ALWAYS),
    [SYS_utimensat] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_copy_file_range] = NO_OUT(REGULAR_FILE, NO_OFFSETS),
    /* Changes to the file system: no out-parameter. */
    [SYS_unlink] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_unlinkat] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_rmdir] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_mkdir] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_mkdirat] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_rename] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_renameat] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_renameat2] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_link] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_linkat] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_symlink] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_symlinkat] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_chmod] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_fchmod] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_fchmodat] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_chown] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_fchown] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_lchown] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_fchownat] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_truncate] = NO_OUT(ANY_FD, ALWAYS),
    [SYS_ftruncate] = NO_OUT(REGULAR_FILE, ALWAYS),
    [SYS_fsync] = NO_OUT(REGULAR_FILE, ALWAYS),
    [SYS_fdatasync] = NO_OUT(REGULAR_FILE, ALWAYS),
    [SYS_umask] = NO_OUT(ANY_FD, ALWAYS),
    /* Reading limits only: a new limit stays traced (replay runs setrlimit-like calls for
     * real, as the kernel's behaviour can depend on them). */
    [SYS_getrlimit] = FIXED(1, 16, ANY_FD, ALWAYS),
    [SYS_prlimit64] = FIXED(3, 16, ANY_FD, ARG2_NULL),
    [SYS_getrusage] = FIXED(1, 144, ANY_FD, ALWAYS),
    [SYS_sysinfo] = FIXED(0, 112, ANY_FD, ALWAYS),
    [SYS_uname] = FIXED(0, 390, ANY_FD, ALWAYS),
    [SYS_getrandom] = BY_RESULT(0, 1, ANY_FD, NONBLOCK_RANDOM),
    [SYS_ioctl] = {1, 2, 0, 0, 0, ANY_FD, IOCTL_KNOWN},
    [SYS_fcntl] = {1, 2, 0, 0, 0, ANY_FD, FCNTL_KNOWN},
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
  return nr >= 0 && (unsigned long)nr < sizeof kRules / sizeof kRules[0] && kRules[nr].buffered;
}

/* Whether a call with arguments `a` may be buffered under `when`. */
static int condition_holds(const long* a, int when) {
  switch (when) {
    case ARG1_SET: /* clock_gettime without a result pointer: traced, it fails the same */
      return a[1] != 0;
    case TV_ONLY: /* gettimeofday with a timezone too: traced */
      return a[0] != 0 && a[1] == 0;
    case OPEN_CANNOT_BLOCK: {
      /* Reading, or creating a new file (O_CREAT|O_EXCL cannot open an existing FIFO). A
       * read-only open of a FIFO still blocks (preload/README.md, known limits). */
      long flags = a[2];
      if ((flags & O_CREAT) && (flags & O_EXCL)) return 1;
      return (flags & O_ACCMODE) == O_RDONLY && !(flags & O_CREAT);
    }
    case NO_OFFSETS: /* copy_file_range updating no offsets: nothing written to memory */
      return a[1] == 0 && a[3] == 0;
    case ARG2_NULL: /* prlimit64 that only reads the limit */
      return a[2] == 0;
    case NONBLOCK_RANDOM: /* getrandom that cannot wait for entropy (man 2 getrandom) */
      return (a[2] & GRND_NONBLOCK) || (a[2] & GRND_INSECURE) || a[1] <= 256;
    default:
      return 1;
  }
}

/* The rule for call nr, or 0 when it is traced. ioctl's and fcntl's are made in `scratch`. */
static const struct out_rule* rule_for(long nr, const long* a, struct out_rule* scratch) {
  if (!rwd_may_buffer(nr)) return 0;
  const struct out_rule* o = &kRules[nr];
  if (o->when == IOCTL_KNOWN) {
    for (unsigned i = 0; i < sizeof kIoctls / sizeof kIoctls[0]; ++i)
      if ((unsigned long)a[1] == kIoctls[i].request) {
        *scratch = *o;
        scratch->arg = kIoctls[i].size ? 2 : -1;
        scratch->size = kIoctls[i].size;
        scratch->fd_check = kIoctls[i].fd_check;
        return scratch;
      }
    return 0;
  }
  if (o->when == FCNTL_KNOWN) {
    for (unsigned i = 0; i < sizeof kFcntls / sizeof kFcntls[0]; ++i)
      if ((int)a[1] == kFcntls[i].cmd) {
        *scratch = *o;
        scratch->arg = kFcntls[i].size ? 2 : -1;
        scratch->size = kFcntls[i].size;
        return scratch;
      }
    return 0;
  }
  return condition_holds(a, o->when) ? o : 0;
}

static long dispatch(const long* c) {
  const long* a = c + 1;
  struct out_rule scratch;
  const struct out_rule* o = rule_for(c[0], a, &scratch);
  if (!o) return traced(c);
  if (!self.buf && rwd_register_thread() != 0) return traced(c);
  if (o->fd_check != ANY_FD) {
    uint64_t dev, ino;
    if (fd_kind(a[0], &dev, &ino) != S_IFREG) return traced(c);
    if (o->fd_check == REGULAR_NOT_OUTPUT && is_output(dev, ino)) return traced(c);
  }
  uint64_t max = o->arg < 0 ? 0 : o->size ? (uint64_t)o->size : (uint64_t)a[o->size_arg];
  if (!has_room(max)) return traced(c);
  return buffered(c, o->arg, max, o->by_result, o->arg < 0 ? 0 : (void*)a[o->arg]);
}

long rwd_hook(const long call[7]) {
  if (!rwd_enabled || self.busy || self.off) return traced(call);
  self.busy = 1;
  long r = dispatch(call);
  self.busy = 0;
  return r;
}
