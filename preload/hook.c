/* The syscall hook: decides per call whether it can be buffered (rules.c: its whole effect is a
 * result plus an out-parameter of known size; if it may block, only with the desched counter
 * enabled), performs it through rwd_buffered_syscall and logs a record; anything else is made
 * as a traced syscall. The same code runs in record and in replay (only
 * rwd_buffered_syscall's inside differs), so that replay reaches the same memory and
 * registers. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "preload.h"
#include "rules.h"

int rwd_enabled;
int rwd_desched_off;

/* Per-thread state. `busy` keeps a signal handler that runs inside the hook (a fault in the
 * user's buffer) from reusing the buffer: its syscalls are traced. */
struct rwd_thread {
  struct rwd_buffer_header* buf;
  int busy;
  int off;
  int desched_fd; /* its desched counter, or -1 (set when the buffer is registered) */
};
static __thread struct rwd_thread self __attribute__((tls_model("initial-exec")));

static struct {
  uint64_t dev, ino;
  int set;
} outputs[2];

static uint64_t proc_dev;
static int proc_dev_set;

/* The descriptor cache (RWD_FEATURE_FD_CACHE): fd_cache[fd] is 0 (unknown) or FD_KNOWN with
 * the other bits, for descriptors below RWD_FD_CACHE_FDS (the FD_* bits below). One per address
 * space, like the descriptor table its threads share; fd_cache_switch says whether it may be used
 * (RWD_FD_CACHE_*, written by rewind too). Replay runs the same code over the same results, so
 * it decides from the cache as the recording did. */
enum { RWD_FD_CACHE_FDS = 1024 };
static unsigned char fd_cache[RWD_FD_CACHE_FDS];
static volatile int fd_cache_switch;

/* Whether another task may wait for this address space's turn (RWD_FEATURE_TURNS): written
 * by rewind, read before each open that may wait. */
static volatile int turns_switch = RWD_TURNS_SHARED;

/* The files this address space maps shared (RWD_FEATURE_SHARED_FILES), written by rewind. */
static volatile struct rwd_shared_files shared_files;

void rwd_set_proc_device(uint64_t dev) {
  proc_dev = dev;
  proc_dev_set = 1;
}

void rwd_set_output_file(int i, uint64_t dev, uint64_t ino) {
  outputs[i].dev = dev;
  outputs[i].ino = ino;
  outputs[i].set = 1;
}

/* Opens the calling thread's desched counter (rewind_preload_abi.h, RWD_FEATURE_DESCHED): a
 * software perf event counting its context switches, sending it RWD_DESCHED_SIGNAL at each
 * (perf_event_open(2), fcntl(2) F_SETOWN_EX, F_SETSIG). Traced syscalls: replay gets the same
 * descriptor number from the trace. Returns the descriptor, or -1 (perf_event_paranoid 3, or
 * seccomp rules, refuse it: calls that may block then stay traced). */
static int open_desched_counter(void) {
  if (rwd_desched_off) return -1;
  struct perf_event_attr attr;
  unsigned char* p = (unsigned char*)&attr;
  for (unsigned i = 0; i < sizeof attr; ++i) p[i] = 0;
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
  attr.disabled = 1;
  attr.sample_period = 1;
  long fd =
      rwd_library_syscall(SYS_perf_event_open, (long)&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC, 0);
  if (fd < 0) return -1;
  long high = rwd_library_syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, RWD_DESCHED_FD_FLOOR, 0, 0, 0);
  if (high >= 0) {
    rwd_library_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
    fd = high;
  }
  struct f_owner_ex owner = {F_OWNER_TID, (pid_t)rwd_library_syscall(SYS_gettid, 0, 0, 0, 0, 0, 0)};
  if (rwd_library_syscall(SYS_fcntl, fd, F_SETOWN_EX, (long)&owner, 0, 0, 0) != 0 ||
      rwd_library_syscall(SYS_fcntl, fd, F_SETFL, O_ASYNC, 0, 0, 0) != 0 ||
      rwd_library_syscall(SYS_fcntl, fd, F_SETSIG, RWD_DESCHED_SIGNAL, 0, 0, 0) != 0) {
    rwd_library_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
    return -1;
  }
  return (int)fd;
}

int rwd_register_thread(int patch_follows) {
  long p = rwd_library_syscall(SYS_mmap, 0, RWD_BUFFER_SIZE, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p < 0 && p > -4096) {
    self.off = 1;
    return -1;
  }
  int fd = open_desched_counter();
  long features = RWD_FEATURE_PAUSE | RWD_FEATURE_SWITCH | RWD_FEATURE_FD_CACHE |
                  RWD_FEATURE_SHARED_FILES | RWD_FEATURE_LAZY_MASK | RWD_FEATURE_TURNS |
                  (fd >= 0 ? RWD_FEATURE_DESCHED : 0) | (patch_follows ? RWD_FEATURE_PATCH_END : 0);
  ((struct rwd_buffer_header*)p)->library_switch = (uint64_t)(uintptr_t)&rwd_enabled;
  ((struct rwd_buffer_header*)p)->fd_cache_switch = (uint64_t)(uintptr_t)&fd_cache_switch;
  ((struct rwd_buffer_header*)p)->shared_files = (uint64_t)(uintptr_t)&shared_files;
  ((struct rwd_buffer_header*)p)->turns_switch = (uint64_t)(uintptr_t)&turns_switch;
  long r = rwd_library_syscall(RWD_SYS_REGISTER_BUFFER, p, RWD_BUFFER_SIZE, (long)__start_rwd_defer,
                               (long)__stop_rwd_defer, features, fd);
  if (r != 0 && fd >= 0) { /* 1: rewind cannot use the counter (or failed: below) */
    rwd_library_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
    fd = -1;
  }
  if (r < 0) {
    rwd_library_syscall(SYS_munmap, p, RWD_BUFFER_SIZE, 0, 0, 0, 0);
    self.off = 1;
    return -1;
  }
  self.buf = (struct rwd_buffer_header*)p;
  self.desched_fd = fd;
  if (fd >= 0 && rwd_thread_key_ready) pthread_setspecific(rwd_thread_key, (void*)1);
  return 0;
}

pthread_key_t rwd_thread_key;
int rwd_thread_key_ready;

void rwd_thread_ended(void* unused) {
  (void)unused;
  if (self.desched_fd < 0) return;
  long fd = self.desched_fd;
  self.desched_fd = -1; /* its calls from here to its exit are traced if they may block */
  rwd_library_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
}

void rwd_forked_child(void) {
  /* The counter counts the parent's thread and signals it; this process's calls that may
   * block are traced from now on (its own threads open their own counters). */
  self.desched_fd = -1;
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

/* Makes call `c` through rwd_buffered_syscall as `how` says (preload.h, struct rwd_commit):
 * its out-parameter pointed at the record's data, what the record keeps copied out. Returns
 * the result (RWD_ABORTED: abandoned, to be made traced). The record is placed, committed and
 * copied out inside rwd_buffered_syscall, where the recorder never stops: once it returns,
 * the record may already belong to an event. */
static long commit(const long* c, const struct rwd_commit* how) {
  long call[7];
  for (int i = 0; i < 7; ++i) call[i] = c[i];
  return rwd_buffered_syscall(call, self.buf, how);
}

/* 1 for the files whose writes stay traced: rewind's stdout and stderr, procfs files, and the
 * files this memory maps shared (RWD_FEATURE_SHARED_FILES). */
static int is_output(uint64_t dev, uint64_t ino) {
  if (proc_dev_set && dev == proc_dev) return 1;
  for (int i = 0; i < 2; ++i)
    if (outputs[i].set && outputs[i].dev == dev && outputs[i].ino == ino) return 1;
  uint32_t n = shared_files.count;
  if (n > RWD_SHARED_FILES) return 1;
  for (uint32_t i = 0; i < n; ++i)
    if (shared_files.files[i].dev == dev && shared_files.files[i].ino == ino) return 1;
  return 0;
}

/* What the hook knows of a descriptor: its file type and whether it is behind rewind's stdout
 * or stderr (or a procfs file), from a buffered fstat. */
enum { FD_KNOWN = 1, FD_REGULAR = 2, FD_OUTPUT = 4 };

/* fd's slot in the cache, or 0 where the cache is off or fd is outside it. Forgets every
 * descriptor first where rewind asked for it. */
static unsigned char* fd_cache_slot(long fd) {
  if (fd < 0 || fd >= RWD_FD_CACHE_FDS || fd_cache_switch == RWD_FD_CACHE_OFF) return 0;
  if (fd_cache_switch != RWD_FD_CACHE_VALID) {
    for (int i = 0; i < RWD_FD_CACHE_FDS; ++i) fd_cache[i] = 0;
    fd_cache_switch = RWD_FD_CACHE_VALID;
  }
  return &fd_cache[fd];
}

/* Forgets what call c may change: the descriptor close(2) closes, the one dup2(2) and dup3(2)
 * replace, every one for close_range(2). */
static void fd_cache_note(const long* c) {
  long fd = -1;
  switch (c[0]) {
    case SYS_close:
      fd = c[1];
      break;
    case SYS_dup2:
    case SYS_dup3:
      fd = c[2];
      break;
    case SYS_close_range:
      if (fd_cache_switch == RWD_FD_CACHE_VALID) fd_cache_switch = RWD_FD_CACHE_FORGET;
      return;
    default:
      return;
  }
  unsigned char* slot = fd_cache_slot(fd);
  if (slot) *slot = 0;
}

/* The devices of the regular files seen so far, and whether each is a procfs (fstatfs(2):
 * PROC_SUPER_MAGIC). Writes into any procfs's files stay traced, also a /proc the program
 * mounted itself (`unshare --pid --mount-proc`: its /proc/PID/mem). One table per address
 * space; replay fills it from the same buffered results. */
enum { RWD_DEVICES = 16 };
static struct {
  uint64_t dev;
  int procfs;
} devices[RWD_DEVICES];
static volatile int device_count;

/* 1 when the regular file open as `fd` (-1: none to ask about) on device `dev` is on a procfs,
 * 0 when it is not, -1 when that is not known without a call that cannot be made now. */
static int on_procfs(long fd, uint64_t dev) {
  if (proc_dev_set && dev == proc_dev) return 1;
  int n = device_count;
  for (int i = 0; i < n && i < RWD_DEVICES; ++i)
    if (devices[i].dev == dev) return devices[i].procfs;
  if (fd < 0 || !has_room(sizeof(struct statfs))) return -1;
  long c[7] = {SYS_fstatfs, fd, 0, 0, 0, 0, 0};
  uint64_t type; /* f_type, the struct's first field */
  struct rwd_commit how = {
      .keep_max = sizeof type, .to_user = &type, .out_arg = 1, .desched_fd = -1};
  if (commit(c, &how) != 0) return -1;
  const int procfs = type == PROC_SUPER_MAGIC;
  if (n < RWD_DEVICES) {
    devices[n].dev = dev;
    devices[n].procfs = procfs;
    device_count = n + 1;
  }
  return procfs;
}

/* The class (FD_*) of file `fd` (-1: none to ask about) from the first 32 bytes of its struct
 * stat: st_dev, st_ino, st_nlink, st_mode; -1 when whether its writes stay traced is not known
 * (on_procfs). */
static int stat_class(long fd, const uint64_t st[4]) {
  const int regular = (st[3] & S_IFMT) == S_IFREG;
  int output = is_output(st[0], st[1]);
  if (!output && regular) {
    output = on_procfs(fd, st[0]);
    if (output < 0) return -1;
  }
  return FD_KNOWN | (regular ? FD_REGULAR : 0) | (output ? FD_OUTPUT : 0);
}

/* Keeps fd's class, found from a stat made just now, unless rewind asked to forget meanwhile
 * (a signal handler's traced close between the stat and this). */
static void fd_cache_keep(unsigned char* slot, int cls) {
  if (slot && fd_cache_switch == RWD_FD_CACHE_VALID) *slot = (unsigned char)cls;
}

/* FD_KNOWN with FD_REGULAR for a regular file and FD_OUTPUT for the files whose writes stay
 * traced (rewind's stdout and stderr, procfs files), from the cache or a buffered fstat; -1
 * when fstat fails or the buffer is full. */
static int fd_class(long fd) {
  unsigned char* slot = fd_cache_slot(fd);
  if (slot && *slot) return *slot;
  if (!has_room(sizeof(struct stat))) return -1;
  long c[7] = {SYS_fstat, fd, 0, 0, 0, 0, 0};
  uint64_t st[4];
  struct rwd_commit how = {.keep_max = sizeof st, .to_user = st, .out_arg = 1, .desched_fd = -1};
  long r = commit(c, &how);
  if (r != 0) return -1;
  int cls = stat_class(fd, st);
  if (cls < 0) return FD_KNOWN | FD_REGULAR | FD_OUTPUT; /* traced, asked again next time */
  fd_cache_keep(slot, cls);
  return cls;
}

/* After the program's own buffered fstat(2), or fstatat(2) of a descriptor (AT_EMPTY_PATH with
 * an empty path), that succeeded: keeps what it says of the descriptor, so that the reads
 * and writes after it need no fstat of their own. */
static void fd_cache_from_stat(const long* c) {
  long fd;
  const uint64_t* st;
  if (c[0] == SYS_fstat) {
    fd = c[1];
    st = (const uint64_t*)c[2];
  } else if (c[0] == SYS_newfstatat && (c[4] & AT_EMPTY_PATH) && c[2] && *(const char*)c[2] == 0) {
    fd = c[1];
    st = (const uint64_t*)c[3];
  } else {
    return;
  }
  /* (No call of its own here: a file on a device not seen yet is asked about when used.) */
  int cls = stat_class(-1, st);
  if (cls > 0) fd_cache_keep(fd_cache_slot(fd), cls);
}

/* 1 when `path` (a truncate's) may name a file this memory maps shared, whose size change
 * must stay traced: a buffered stat(2) decides, made only when a file is listed. */
static int path_maps_shared(const char* path) {
  uint32_t n = shared_files.count;
  if (n == 0) return 0;
  if (n > RWD_SHARED_FILES || !has_room(sizeof(struct stat))) return 1;
  long c[7] = {SYS_stat, (long)path, 0, 0, 0, 0, 0};
  uint64_t st[4];
  struct rwd_commit how = {.keep_max = sizeof st, .to_user = st, .out_arg = 1, .desched_fd = -1};
  if (commit(c, &how) != 0) return 0; /* the call fails as well, or truncates nothing mapped */
  for (uint32_t i = 0; i < n; ++i)
    if (shared_files.files[i].dev == st[0] && shared_files.files[i].ino == st[1]) return 1;
  return 0;
}

/* Reads the calling thread's signal mask into *mask with a buffered rt_sigprocmask, so that
 * replay reads the same from the record. 0 when the buffer is full or the call fails. */
static int read_mask(uint64_t* mask) {
  if (!has_room(8)) return 0;
  long c[7] = {SYS_rt_sigprocmask, SIG_BLOCK, 0, 0, 8, 0, 0};
  struct rwd_commit how = {.keep_max = 8, .to_user = mask, .out_arg = 2, .desched_fd = -1};
  return commit(c, &how) == 0;
}

/* 1 when a call that may block can be buffered now: the thread has a desched counter and does
 * not block its signal (read_mask). */
static int can_desched(void) {
  uint64_t mask = 0;
  if (self.desched_fd < 0 || !read_mask(&mask)) return 0;
  return !(mask & (1ull << (RWD_DESCHED_SIGNAL - 1)));
}

/* An rt_sigprocmask made without a syscall in replay (RWD_FEATURE_LAZY_MASK). */
struct mask_call {
  long how;
  const uint64_t* set;
  struct rwd_buffer_header* hdr;
};

/* The preparation of a lazy rt_sigprocmask. Replaying, the record in place holds the old mask
 * the kernel wrote when recording: when it is this call's and the call succeeded, leaves the
 * new mask for rewind to set (man 2 sigprocmask: the union, the difference or the set itself;
 * SIGKILL and SIGSTOP are never blocked). The set is read before the old mask is copied out
 * (they may be the same memory, which the kernel also reads first). The registers it leaves
 * are all loaded again before the call, so record and replay go on alike. */
RWD_DEFERRED static void lazy_mask_prepare(const struct rwd_commit* how, void* data, long call[7],
                                           int replaying) {
  (void)call;
  const struct mask_call* m = how->ctx;
  const struct rwd_record* rec = (const struct rwd_record*)((char*)data - RWD_RECORD_HEADER);
  if (!replaying || rec->nr != SYS_rt_sigprocmask || rec->result != 0) return;
  const uint64_t old = *(const uint64_t*)data, set = *m->set;
  uint64_t now = m->how == SIG_BLOCK ? old | set : m->how == SIG_UNBLOCK ? old & ~set : set;
  now &= ~((1ull << (SIGKILL - 1)) | (1ull << (SIGSTOP - 1)));
  m->hdr->pending_mask = now;
  m->hdr->mask_pending = 1;
}

/* Makes rt_sigprocmask call c as RWD_FEATURE_LAZY_MASK says, where it may be (a mask of 8
 * bytes; with a set, a known `how` and no forced signal's state changed: SIG_SETMASK reads the
 * mask first), leaving the result in *result; 0 when the call is to go the ordinary way. A
 * call without a set only reads the mask: replay reads it from the record, as for any
 * buffered call. Reads the set (a bad pointer faults here, where the kernel would return
 * EFAULT: preload/README.md). */
static int lazy_sigprocmask(const long* c, long* result) {
  const long how = c[1];
  const uint64_t* set = (const uint64_t*)c[2];
  if (c[4] != 8) return 0;
  if (set) {
    if (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK) return 0;
    uint64_t changed = *set;
    if (how == SIG_SETMASK) {
      uint64_t old = 0;
      if (!read_mask(&old)) return 0;
      changed ^= old;
    }
    if (changed & RWD_FORCED_SIGNALS) return 0;
  }
  if (!has_room(8)) return 0;
  struct mask_call m = {.how = how, .set = set, .hdr = self.buf};
  struct rwd_commit h = {.keep_max = 8,
                         .to_user = (void*)c[3],
                         .out_arg = 2,
                         .desched_fd = -1,
                         .prepare = set ? lazy_mask_prepare : 0,
                         .ctx = &m};
  *result = commit(c, &h);
  if (*result == RWD_ABORTED) *result = traced(c); /* a program's filter judged it */
  return 1;
}

/* The program may not close or replace the desched counter's descriptor: such a call fails
 * with EBADF, as for a descriptor it never had (rr protects its own the same way). */
static int touches_desched_fd(const long* c) {
  if (self.desched_fd < 0) return 0;
  long fd = self.desched_fd;
  switch (c[0]) {
    case SYS_close:
      return c[1] == fd;
    case SYS_dup2:
    case SYS_dup3:
      return c[2] == fd;
    default:
      return 0;
  }
}

/* Vector calls (rules.h, enum vector_kind): readv(2) and preadv(2) fill the caller's buffers
 * in order, as one read(2) of the same total would fill one buffer; recvmsg(2) likewise, and
 * also writes the header's msg_flags, msg_controllen and, with a source address, msg_namelen
 * and the address. The call is made with a single iovec over the record's data (and recvmsg
 * with a header in the record), then finish() copies the data out over the caller's iovecs. */
struct vector_ctx {
  struct iovec one;             /* the single iovec the call gets, over the record's data */
  const struct iovec* user_iov; /* the caller's iovecs */
  long user_cnt;
  struct msghdr* user_msg; /* recvmsg: the caller's header */
  uint64_t name_room;      /* recvmsg: bytes of the record kept for the address */
};

/* The record's data of a recvmsg: the header the kernel filled in, the address, then data. */
#define MSG_HEADER_BYTES ((uint64_t)sizeof(struct msghdr))

RWD_DEFERRED static void vector_prepare(const struct rwd_commit* how, void* data, long call[7],
                                        int replaying) {
  struct vector_ctx* v = how->ctx;
  if (!v->user_msg) {
    v->one.iov_base = data;
    call[2] = (long)&v->one;
    call[3] = 1;
    return;
  }
  char* d = data;
  v->one.iov_base = d + MSG_HEADER_BYTES + v->name_room;
  call[2] = (long)d;
  if (replaying) return; /* the record holds the header as the kernel left it */
  struct msghdr* m = data;
  m->msg_name = v->name_room ? d + MSG_HEADER_BYTES : 0;
  m->msg_namelen = v->user_msg->msg_namelen;
  m->msg_iov = &v->one;
  m->msg_iovlen = 1;
  m->msg_control = 0;
  m->msg_controllen = 0;
  m->msg_flags = 0;
}

RWD_DEFERRED static void vector_finish(const struct rwd_commit* how, const void* data,
                                       uint64_t kept) {
  const struct vector_ctx* v = how->ctx;
  const char* from = data;
  if (v->user_msg) {
    if (kept < MSG_HEADER_BYTES + v->name_room) return; /* failed: the kernel wrote nothing */
    const struct msghdr* m = data;
    struct msghdr* u = v->user_msg;
    if (u->msg_name) { /* move_addr_to_user: min of the two lengths, the kernel's length */
      uint64_t n = m->msg_namelen < u->msg_namelen ? m->msg_namelen : u->msg_namelen;
      rwd_copy(u->msg_name, from + MSG_HEADER_BYTES, n);
      u->msg_namelen = m->msg_namelen;
    }
    u->msg_flags = m->msg_flags;
    u->msg_controllen = 0;
    from += MSG_HEADER_BYTES + v->name_room;
    kept -= MSG_HEADER_BYTES + v->name_room;
  }
  for (long i = 0; i < v->user_cnt && kept; ++i) {
    uint64_t n = v->user_iov[i].iov_len < kept ? v->user_iov[i].iov_len : kept;
    rwd_copy(v->user_iov[i].iov_base, from, n);
    from += n;
    kept -= n;
  }
}

/* Fills v and how for vector call c whose kind is `kind`; returns the most bytes its record
 * may keep, or -1 when the call is traced instead: a count outside 1..IOV_MAX, a total the
 * kernel would refuse, control data (its descriptors and credentials stay traced), a total
 * larger than the buffer takes. Reads the caller's iovecs and header (a bad pointer faults
 * here, where the kernel would return EFAULT: preload/README.md). */
static long vector_setup(int kind, const long* c, struct vector_ctx* v, struct rwd_commit* how) {
  const struct iovec* iov;
  long cnt;
  uint64_t base = 0;
  v->user_msg = 0;
  v->name_room = 0;
  if (kind == MSG_READ) {
    struct msghdr* m = (struct msghdr*)c[2];
    if (!m || m->msg_control || m->msg_controllen) return -1;
    if (m->msg_name) {
      if (m->msg_namelen > 128) return -1; /* more than a sockaddr_storage */
      v->name_room = align8(m->msg_namelen);
    }
    v->user_msg = m;
    iov = m->msg_iov;
    cnt = (long)m->msg_iovlen;
    base = MSG_HEADER_BYTES + v->name_room;
  } else {
    iov = (const struct iovec*)c[2];
    cnt = c[3];
  }
  if (cnt < 1 || cnt > 1024 || !iov) return -1; /* UIO_MAXIOV (linux/uio.h): EINVAL */
  uint64_t total = 0;
  for (long i = 0; i < cnt; ++i) {
    if (iov[i].iov_len > RWD_BUFFER_SIZE) return -1; /* larger than any record */
    total += iov[i].iov_len;
    if (total > RWD_BUFFER_SIZE) return -1;
  }
  v->one.iov_base = 0;
  v->one.iov_len = total;
  v->user_iov = iov;
  v->user_cnt = cnt;
  how->keep_base = base;
  how->prepare = vector_prepare;
  how->finish = vector_finish;
  how->ctx = v;
  return (long)(base + total);
}

static long dispatch(const long* c) {
  const long* a = c + 1;
  if (touches_desched_fd(c)) return -EBADF;
  fd_cache_note(c);
  struct out_rule scratch;
  const struct out_rule* o = rwd_rule_for(c[0], a, &scratch);
  if (!o) return traced(c);
  if (!self.buf && rwd_register_thread(0) != 0) return traced(c);
  long lazy = 0;
  if (c[0] == SYS_rt_sigprocmask && lazy_sigprocmask(c, &lazy)) return lazy;
  int regular = 0;
  if (o->fd_check == PATH_NOT_SHARED) {
    if (path_maps_shared((const char*)a[0])) return traced(c);
  } else if (o->fd_check != ANY_FD || o->blocks == UNLESS_REGULAR) {
    int cls = fd_class(a[0]);
    if (cls < 0) return traced(c);
    regular = cls & FD_REGULAR;
    if ((o->fd_check == REGULAR_FILE || o->fd_check == REGULAR_NOT_OUTPUT ||
         o->fd_check == REGULAR_TO_NOT_OUTPUT) &&
        !regular)
      return traced(c);
    if ((o->fd_check == REGULAR_NOT_OUTPUT || o->fd_check == NOT_OUTPUT) && (cls & FD_OUTPUT))
      return traced(c);
    if (o->fd_check == REGULAR_TO_NOT_OUTPUT) {
      int out = fd_class(a[2]);
      if (out < 0 || (out & FD_OUTPUT)) return traced(c);
    }
  }
  int arm = o->blocks == MAY_BLOCK || (o->blocks == UNLESS_REGULAR && !regular);
  /* An open, which only a FIFO makes wait (for its other end), where no other task waits for
   * this memory's turn: a wait holds up nothing but this call. Reads, writes and polls stay
   * armed: their waits, made traced, are the events at which a replay interleaves processes
   * that talk to each other (README.md, "Calls that may block"). */
  if (turns_switch == RWD_TURNS_ALONE && (c[0] == SYS_openat || c[0] == SYS_open)) arm = 0;
  if (arm && !can_desched()) {
    if (!o->unarmed_ok) return traced(c);
    arm = 0;
  }
  uint64_t max = 0;
  if (o->arg >= 0) max = o->size ? o->size : (uint64_t)a[o->size_arg] * o->elem;
  struct rwd_commit how = {.result_unit = o->unit,
                           .to_user = o->arg < 0 ? 0 : (void*)a[o->arg],
                           .out_arg = o->arg,
                           .desched_fd = arm ? self.desched_fd : -1,
                           .run_in_replay = o->run_in_replay};
  struct vector_ctx v;
  if (o->vector) {
    long m = vector_setup(o->vector, c, &v, &how);
    if (m < 0) return traced(c);
    max = (uint64_t)m;
    how.result_unit = 1;
  }
  if (!has_room(max)) return traced(c);
  how.keep_max = max;
  how.in_bytes = o->in_out ? max : 0;
  long r = commit(c, &how);
  if (r == 0) fd_cache_from_stat(c);
  /* Interrupted while it waited (the recorder's abort, or the trace's abort mark in replay):
   * made again as a traced syscall, which the recorder sees wait. */
  return r == RWD_ABORTED ? traced(c) : r;
}

/* 1 for the calls that do not come back when they succeed: execve(2), execveat(2), _exit(2),
 * exit_group(2). Made by a vfork child, which runs on its parent's memory and thread pointer,
 * they must not leave `self.busy` set: the parent would find it set when it runs again, and
 * make every syscall traced from then on. */
static int never_returns(long nr) {
  return nr == SYS_execve || nr == SYS_execveat || nr == SYS_exit || nr == SYS_exit_group;
}

long rwd_hook(const long call[7]) {
  if (!rwd_enabled || self.busy || self.off || never_returns(call[0])) return traced(call);
  self.busy = 1;
  long r = dispatch(call);
  self.busy = 0;
  return r;
}
