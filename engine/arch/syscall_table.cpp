#include "syscall_table.h"

#include <asm/ioctls.h>
#include <sys/syscall.h>

#include <unordered_map>
#include <vector>

#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

using R = ReplayPolicy;
using S = SizeRule;

constexpr OutParam fixed(int arg, uint32_t n) {
  return {int8_t(arg), S::Fixed, n, -1, false};
}
constexpr OutParam fixed_always(int arg, uint32_t n) {
  return {int8_t(arg), S::Fixed, n, -1, true};
}
// `cap` is the argument holding the buffer's capacity: the most the kernel may write.
constexpr OutParam result(int arg, int cap) {
  return {int8_t(arg), S::Result, 0, int8_t(cap), false};
}
constexpr OutParam result_times(int arg, int cap, uint32_t n) {
  return {int8_t(arg), S::ResultTimes, n, int8_t(cap), false};
}
constexpr OutParam arg_bytes(int arg, int size_arg) {
  return {int8_t(arg), S::Arg, 0, int8_t(size_arg), false};
}
constexpr OutParam arg_times(int arg, int size_arg, uint32_t n) {
  return {int8_t(arg), S::ArgTimes, n, int8_t(size_arg), false};
}
constexpr OutParam len_ptr(int arg, int len_arg) {
  return {int8_t(arg), S::LenPtr, 0, int8_t(len_arg), false};
}
constexpr OutParam iov(int arg, int count_arg) {
  return {int8_t(arg), S::Iov, 0, int8_t(count_arg), false};
}
constexpr OutParam fdset(int arg, int nfds_arg) {
  return {int8_t(arg), S::FdSet, 0, int8_t(nfds_arg), true};
}

// Sizes of kernel structures on x86-64 (bytes).
constexpr uint32_t kStat = 144, kStatx = 256, kStatfs = 120, kTimespec = 16, kTimeval = 16,
                   kTimezone = 8, kRusage = 144, kSiginfo = 128, kRlimit = 16, kUtsname = 390,
                   kSysinfo = 112, kTms = 32, kItimerval = 32, kItimerspec = 32, kSigset = 8,
                   kStack = 24, kSockaddrLen = 4, kEpollEvent = 12, kPollfd = 8, kMsghdr = 56,
                   kMmsghdr = 64, kCapData = 24, kFlock = 32, kSchedParam = 4;

struct Row {
  int nr;
  const char* name;
  R replay;
  std::array<OutParam, 4> out;
  OutputKind output = OutputKind::None;
};

// The table. Everything not listed is unsupported and stops the recording with its name.
const std::vector<Row>& rows() {
  static const std::vector<Row> t = {
      // File I/O: emulated; replay never touches the file system.
      {SYS_read, "read", R::Emulate, {result(1, 2)}},
      {SYS_write, "write", R::Emulate, {}, OutputKind::Buffer},
      {SYS_pread64, "pread64", R::Emulate, {result(1, 2)}},
      {SYS_pwrite64, "pwrite64", R::Emulate, {}, OutputKind::Buffer},
      {SYS_readv, "readv", R::Emulate, {iov(1, 2)}},
      {SYS_writev, "writev", R::Emulate, {}, OutputKind::Iov},
      {SYS_preadv, "preadv", R::Emulate, {iov(1, 2)}},
      {SYS_pwritev, "pwritev", R::Emulate, {}, OutputKind::Iov},
      {SYS_preadv2, "preadv2", R::Emulate, {iov(1, 2)}},
      {SYS_pwritev2, "pwritev2", R::Emulate, {}, OutputKind::Iov},
      {SYS_open, "open", R::Emulate, {}},
      {SYS_openat, "openat", R::Emulate, {}},
      {SYS_openat2, "openat2", R::Emulate, {}},
      {SYS_creat, "creat", R::Emulate, {}},
      {SYS_close, "close", R::Emulate, {}},
      {SYS_close_range, "close_range", R::Emulate, {}},
      {SYS_lseek, "lseek", R::Emulate, {}},
      {SYS_stat, "stat", R::Emulate, {fixed(1, kStat)}},
      {SYS_fstat, "fstat", R::Emulate, {fixed(1, kStat)}},
      {SYS_lstat, "lstat", R::Emulate, {fixed(1, kStat)}},
      {SYS_newfstatat, "newfstatat", R::Emulate, {fixed(2, kStat)}},
      {SYS_statx, "statx", R::Emulate, {fixed(4, kStatx)}},
      {SYS_statfs, "statfs", R::Emulate, {fixed(1, kStatfs)}},
      {SYS_fstatfs, "fstatfs", R::Emulate, {fixed(1, kStatfs)}},
      {SYS_access, "access", R::Emulate, {}},
      {SYS_faccessat, "faccessat", R::Emulate, {}},
      {SYS_faccessat2, "faccessat2", R::Emulate, {}},
      {SYS_readlink, "readlink", R::Emulate, {result(1, 2)}},
      {SYS_readlinkat, "readlinkat", R::Emulate, {result(2, 3)}},
      {SYS_getdents, "getdents", R::Emulate, {result(1, 2)}},
      {SYS_getdents64, "getdents64", R::Emulate, {result(1, 2)}},
      {SYS_getcwd, "getcwd", R::Emulate, {result(0, 1)}},
      {SYS_chdir, "chdir", R::Emulate, {}},
      {SYS_fchdir, "fchdir", R::Emulate, {}},
      {SYS_rename, "rename", R::Emulate, {}},
      {SYS_renameat, "renameat", R::Emulate, {}},
      {SYS_renameat2, "renameat2", R::Emulate, {}},
      {SYS_mkdir, "mkdir", R::Emulate, {}},
      {SYS_mkdirat, "mkdirat", R::Emulate, {}},
      {SYS_mknod, "mknod", R::Emulate, {}},
      {SYS_mknodat, "mknodat", R::Emulate, {}},
      {SYS_rmdir, "rmdir", R::Emulate, {}},
      {SYS_link, "link", R::Emulate, {}},
      {SYS_linkat, "linkat", R::Emulate, {}},
      {SYS_unlink, "unlink", R::Emulate, {}},
      {SYS_unlinkat, "unlinkat", R::Emulate, {}},
      {SYS_symlink, "symlink", R::Emulate, {}},
      {SYS_symlinkat, "symlinkat", R::Emulate, {}},
      {SYS_chmod, "chmod", R::Emulate, {}},
      {SYS_fchmod, "fchmod", R::Emulate, {}},
      {SYS_fchmodat, "fchmodat", R::Emulate, {}},
      {SYS_chown, "chown", R::Emulate, {}},
      {SYS_fchown, "fchown", R::Emulate, {}},
      {SYS_lchown, "lchown", R::Emulate, {}},
      {SYS_fchownat, "fchownat", R::Emulate, {}},
      {SYS_utime, "utime", R::Emulate, {}},
      {SYS_utimes, "utimes", R::Emulate, {}},
      {SYS_utimensat, "utimensat", R::Emulate, {}},
      {SYS_futimesat, "futimesat", R::Emulate, {}},
      {SYS_truncate, "truncate", R::Emulate, {}},
      {SYS_ftruncate, "ftruncate", R::Emulate, {}},
      {SYS_fallocate, "fallocate", R::Emulate, {}},
      {SYS_fsync, "fsync", R::Emulate, {}},
      {SYS_fdatasync, "fdatasync", R::Emulate, {}},
      {SYS_sync, "sync", R::Emulate, {}},
      {SYS_syncfs, "syncfs", R::Emulate, {}},
      {SYS_sync_file_range, "sync_file_range", R::Emulate, {}},
      {SYS_flock, "flock", R::Emulate, {}},
      {SYS_fadvise64, "fadvise64", R::Emulate, {}},
      {SYS_readahead, "readahead", R::Emulate, {}},
      {SYS_umask, "umask", R::Emulate, {}},
      {SYS_dup, "dup", R::Emulate, {}},
      {SYS_dup2, "dup2", R::Emulate, {}},
      {SYS_dup3, "dup3", R::Emulate, {}},
      {SYS_pipe, "pipe", R::Emulate, {fixed(0, 8)}},
      {SYS_pipe2, "pipe2", R::Emulate, {fixed(0, 8)}},
      {SYS_sendfile, "sendfile", R::Emulate, {fixed(2, 8)}},
      {SYS_copy_file_range, "copy_file_range", R::Emulate, {fixed(1, 8), fixed(3, 8)}},
      {SYS_splice, "splice", R::Emulate, {fixed(1, 8), fixed(3, 8)}},
      {SYS_tee, "tee", R::Emulate, {}},
      {SYS_getxattr, "getxattr", R::Emulate, {result(2, 3)}},
      {SYS_lgetxattr, "lgetxattr", R::Emulate, {result(2, 3)}},
      {SYS_fgetxattr, "fgetxattr", R::Emulate, {result(2, 3)}},
      {SYS_listxattr, "listxattr", R::Emulate, {result(1, 2)}},
      {SYS_llistxattr, "llistxattr", R::Emulate, {result(1, 2)}},
      {SYS_flistxattr, "flistxattr", R::Emulate, {result(1, 2)}},
      {SYS_setxattr, "setxattr", R::Emulate, {}},
      {SYS_lsetxattr, "lsetxattr", R::Emulate, {}},
      {SYS_fsetxattr, "fsetxattr", R::Emulate, {}},
      {SYS_removexattr, "removexattr", R::Emulate, {}},
      {SYS_fremovexattr, "fremovexattr", R::Emulate, {}},
      {SYS_memfd_create, "memfd_create", R::Emulate, {}},
      {SYS_inotify_init1, "inotify_init1", R::Emulate, {}},
      {SYS_inotify_add_watch, "inotify_add_watch", R::Emulate, {}},
      {SYS_inotify_rm_watch, "inotify_rm_watch", R::Emulate, {}},
      {SYS_eventfd2, "eventfd2", R::Emulate, {}},
      // librewind_preload.so's desched counter (and a program's own counters): replay never
      // opens one; reads from it are emulated like any other.
      {SYS_perf_event_open, "perf_event_open", R::Emulate, {}},
      {SYS_eventfd, "eventfd", R::Emulate, {}},
      {SYS_ioctl, "ioctl", R::Emulate, {}},
      {SYS_fcntl, "fcntl", R::Emulate, {}},
      // Waiting for I/O.
      {SYS_poll, "poll", R::Emulate, {arg_times(0, 1, kPollfd)}},
      {SYS_ppoll, "ppoll", R::Emulate, {arg_times(0, 1, kPollfd), fixed_always(2, kTimespec)}},
      {SYS_select,
       "select",
       R::Emulate,
       {fdset(1, 0), fdset(2, 0), fdset(3, 0), fixed_always(4, kTimeval)}},
      {SYS_pselect6,
       "pselect6",
       R::Emulate,
       {fdset(1, 0), fdset(2, 0), fdset(3, 0), fixed_always(4, kTimespec)}},
      {SYS_epoll_create, "epoll_create", R::Emulate, {}},
      {SYS_epoll_create1, "epoll_create1", R::Emulate, {}},
      {SYS_epoll_ctl, "epoll_ctl", R::Emulate, {}},
      {SYS_epoll_wait, "epoll_wait", R::Emulate, {result_times(1, 2, kEpollEvent)}},
      {SYS_epoll_pwait, "epoll_pwait", R::Emulate, {result_times(1, 2, kEpollEvent)}},
      {SYS_epoll_pwait2, "epoll_pwait2", R::Emulate, {result_times(1, 2, kEpollEvent)}},
      // Sockets: emulated, so replay works with the peer gone.
      {SYS_socket, "socket", R::Emulate, {}},
      {SYS_socketpair, "socketpair", R::Emulate, {fixed(3, 8)}},
      {SYS_connect, "connect", R::Emulate, {}},
      {SYS_bind, "bind", R::Emulate, {}},
      {SYS_listen, "listen", R::Emulate, {}},
      {SYS_accept, "accept", R::Emulate, {len_ptr(1, 2), fixed(2, kSockaddrLen)}},
      {SYS_accept4, "accept4", R::Emulate, {len_ptr(1, 2), fixed(2, kSockaddrLen)}},
      {SYS_getsockname, "getsockname", R::Emulate, {len_ptr(1, 2), fixed(2, kSockaddrLen)}},
      {SYS_getpeername, "getpeername", R::Emulate, {len_ptr(1, 2), fixed(2, kSockaddrLen)}},
      {SYS_getsockopt, "getsockopt", R::Emulate, {len_ptr(3, 4), fixed(4, kSockaddrLen)}},
      {SYS_setsockopt, "setsockopt", R::Emulate, {}},
      {SYS_shutdown, "shutdown", R::Emulate, {}},
      {SYS_sendto, "sendto", R::Emulate, {}, OutputKind::Buffer},
      {SYS_recvfrom, "recvfrom", R::Emulate, {result(1, 2), len_ptr(4, 5), fixed(5, kSockaddrLen)}},
      {SYS_sendmsg, "sendmsg", R::Emulate, {}},
      {SYS_recvmsg, "recvmsg", R::Emulate, {}},
      {SYS_sendmmsg, "sendmmsg", R::Emulate, {result_times(1, 2, kMmsghdr)}},
      // Time and randomness: the nondeterminism rewind exists to capture.
      {SYS_clock_gettime, "clock_gettime", R::Emulate, {fixed(1, kTimespec)}},
      {SYS_clock_getres, "clock_getres", R::Emulate, {fixed(1, kTimespec)}},
      {SYS_gettimeofday, "gettimeofday", R::Emulate, {fixed(0, kTimeval), fixed(1, kTimezone)}},
      {SYS_time, "time", R::Emulate, {fixed(0, 8)}},
      {SYS_nanosleep, "nanosleep", R::Emulate, {fixed_always(1, kTimespec)}},
      {SYS_clock_nanosleep, "clock_nanosleep", R::Emulate, {fixed_always(3, kTimespec)}},
      {SYS_getrandom, "getrandom", R::Emulate, {result(0, 1)}},
      {SYS_times, "times", R::Emulate, {fixed(0, kTms)}},
      {SYS_getitimer, "getitimer", R::Emulate, {fixed(1, kItimerval)}},
      {SYS_setitimer, "setitimer", R::Emulate, {fixed(2, kItimerval)}},
      {SYS_alarm, "alarm", R::Emulate, {}},
      {SYS_timer_create, "timer_create", R::Emulate, {fixed(2, 4)}},
      {SYS_timer_settime, "timer_settime", R::Emulate, {fixed(3, kItimerspec)}},
      {SYS_timer_gettime, "timer_gettime", R::Emulate, {fixed(1, kItimerspec)}},
      {SYS_timer_getoverrun, "timer_getoverrun", R::Emulate, {}},
      {SYS_timer_delete, "timer_delete", R::Emulate, {}},
      {SYS_timerfd_create, "timerfd_create", R::Emulate, {}},
      {SYS_timerfd_settime, "timerfd_settime", R::Emulate, {fixed(3, kItimerspec)}},
      {SYS_timerfd_gettime, "timerfd_gettime", R::Emulate, {fixed(1, kItimerspec)}},
      // Identity and system information.
      {SYS_getpid, "getpid", R::Emulate, {}},
      {SYS_getppid, "getppid", R::Emulate, {}},
      {SYS_gettid, "gettid", R::Emulate, {}},
      {SYS_getuid, "getuid", R::Emulate, {}},
      {SYS_geteuid, "geteuid", R::Emulate, {}},
      {SYS_getgid, "getgid", R::Emulate, {}},
      {SYS_getegid, "getegid", R::Emulate, {}},
      {SYS_getresuid, "getresuid", R::Emulate, {fixed(0, 4), fixed(1, 4), fixed(2, 4)}},
      {SYS_getresgid, "getresgid", R::Emulate, {fixed(0, 4), fixed(1, 4), fixed(2, 4)}},
      {SYS_getgroups, "getgroups", R::Emulate, {result_times(1, 0, 4)}},
      {SYS_setuid, "setuid", R::Emulate, {}},
      {SYS_setgid, "setgid", R::Emulate, {}},
      {SYS_setreuid, "setreuid", R::Emulate, {}},
      {SYS_setregid, "setregid", R::Emulate, {}},
      {SYS_setresuid, "setresuid", R::Emulate, {}},
      {SYS_setresgid, "setresgid", R::Emulate, {}},
      {SYS_setgroups, "setgroups", R::Emulate, {}},
      {SYS_getpgrp, "getpgrp", R::Emulate, {}},
      {SYS_getpgid, "getpgid", R::Emulate, {}},
      {SYS_setpgid, "setpgid", R::Emulate, {}},
      {SYS_getsid, "getsid", R::Emulate, {}},
      {SYS_setsid, "setsid", R::Emulate, {}},
      {SYS_capget, "capget", R::Emulate, {fixed(0, 8), fixed(1, kCapData)}},
      {SYS_capset, "capset", R::Emulate, {}},
      {SYS_uname, "uname", R::Emulate, {fixed(0, kUtsname)}},
      {SYS_sysinfo, "sysinfo", R::Emulate, {fixed(0, kSysinfo)}},
      {SYS_getrlimit, "getrlimit", R::Emulate, {fixed(1, kRlimit)}},
      {SYS_setrlimit, "setrlimit", R::Emulate, {}},
      {SYS_prlimit64, "prlimit64", R::Emulate, {fixed(3, kRlimit)}},
      {SYS_getrusage, "getrusage", R::Emulate, {fixed(1, kRusage)}},
      {SYS_getpriority, "getpriority", R::Emulate, {}},
      {SYS_setpriority, "setpriority", R::Emulate, {}},
      {SYS_personality, "personality", R::Emulate, {}},
      {SYS_prctl, "prctl", R::Emulate, {}},
      {SYS_getcpu, "getcpu", R::Emulate, {fixed(0, 4), fixed(1, 4)}},
      {SYS_sched_yield, "sched_yield", R::Emulate, {}},
      {SYS_sched_getaffinity, "sched_getaffinity", R::Emulate, {result(2, 1)}},
      {SYS_sched_setaffinity, "sched_setaffinity", R::Emulate, {}},
      {SYS_sched_getparam, "sched_getparam", R::Emulate, {fixed(1, kSchedParam)}},
      {SYS_sched_setparam, "sched_setparam", R::Emulate, {}},
      {SYS_sched_getscheduler, "sched_getscheduler", R::Emulate, {}},
      {SYS_sched_setscheduler, "sched_setscheduler", R::Emulate, {}},
      {SYS_sched_get_priority_max, "sched_get_priority_max", R::Emulate, {}},
      {SYS_sched_get_priority_min, "sched_get_priority_min", R::Emulate, {}},
      {SYS_ioprio_get, "ioprio_get", R::Emulate, {}},
      {SYS_ioprio_set, "ioprio_set", R::Emulate, {}},
      {SYS_membarrier, "membarrier", R::Emulate, {}},
      {SYS_futex, "futex", R::Emulate, {}},
      {SYS_get_robust_list, "get_robust_list", R::Emulate, {fixed(1, 8), fixed(2, 8)}},
      {SYS_set_robust_list, "set_robust_list", R::Execute, {}},
      {SYS_set_tid_address, "set_tid_address", R::ExecuteSetResult, {}},
      {SYS_rseq, "rseq", R::Special, {}},
      // Address space: run for real at the recorded addresses.
      {SYS_brk, "brk", R::Execute, {}},
      {SYS_mmap, "mmap", R::Special, {}},
      {SYS_munmap, "munmap", R::Execute, {}},
      {SYS_mprotect, "mprotect", R::Execute, {}},
      {SYS_mremap, "mremap", R::Special, {}},
      {SYS_madvise, "madvise", R::Execute, {}},
      {SYS_msync, "msync", R::Emulate, {}},
      {SYS_mincore, "mincore", R::Emulate, {}},
      {SYS_mlock, "mlock", R::Emulate, {}},
      {SYS_munlock, "munlock", R::Emulate, {}},
      {SYS_mlockall, "mlockall", R::Emulate, {}},
      {SYS_munlockall, "munlockall", R::Emulate, {}},
      {SYS_arch_prctl, "arch_prctl", R::Execute, {}},
      // Signals: handler state is real in replay, so that faults are delivered the same way.
      {SYS_rt_sigaction, "rt_sigaction", R::Execute, {}},
      {SYS_rt_sigprocmask, "rt_sigprocmask", R::Execute, {}},
      {SYS_sigaltstack, "sigaltstack", R::Execute, {}},
      {SYS_rt_sigreturn, "rt_sigreturn", R::Special, {}},
      {SYS_rt_sigpending, "rt_sigpending", R::Emulate, {fixed(0, kSigset)}},
      {SYS_rt_sigtimedwait, "rt_sigtimedwait", R::Emulate, {fixed(1, kSiginfo)}},
      {SYS_rt_sigsuspend, "rt_sigsuspend", R::Emulate, {}},
      {SYS_pause, "pause", R::Emulate, {}},
      {SYS_kill, "kill", R::Emulate, {}},
      {SYS_tkill, "tkill", R::Emulate, {}},
      {SYS_tgkill, "tgkill", R::Emulate, {}},
      {SYS_rt_sigqueueinfo, "rt_sigqueueinfo", R::Emulate, {}},
      {SYS_signalfd4, "signalfd4", R::Emulate, {}},
      {SYS_restart_syscall, "restart_syscall", R::Emulate, {}},
      // Processes.
      {SYS_fork, "fork", R::Special, {}},
      {SYS_vfork, "vfork", R::Special, {}},
      {SYS_clone, "clone", R::Special, {}},
      {SYS_clone3, "clone3", R::Special, {}},
      {SYS_execve, "execve", R::Special, {}},
      {SYS_execveat, "execveat", R::Special, {}},
      {SYS_exit, "exit", R::Special, {}},
      {SYS_exit_group, "exit_group", R::Special, {}},
      {SYS_wait4, "wait4", R::Emulate, {fixed(1, 4), fixed(3, kRusage)}},
      {SYS_waitid, "waitid", R::Emulate, {fixed(2, kSiginfo), fixed(4, kRusage)}},
      {SYS_pidfd_open, "pidfd_open", R::Emulate, {}},
      {SYS_pidfd_send_signal, "pidfd_send_signal", R::Emulate, {}},
      {SYS_sched_getattr, "sched_getattr", R::Emulate, {arg_bytes(1, 2)}},
  };
  return t;
}

const std::unordered_map<long, SyscallSpec>& index() {
  static const std::unordered_map<long, SyscallSpec> m = [] {
    std::unordered_map<long, SyscallSpec> m;
    for (const auto& r : rows()) m[r.nr] = SyscallSpec{r.nr, r.name, r.replay, r.out, r.output};
    return m;
  }();
  return m;
}

struct NameEntry {
  int nr;
  const char* name;
};
constexpr NameEntry kNames[] = {
#include "engine/arch/syscall_names.inc"
    // Newer than the build host's kernel headers.
    {451, "cachestat"},         {452, "fchmodat2"},        {453, "map_shadow_stack"},
    {454, "futex_wake"},        {455, "futex_wait"},       {456, "futex_requeue"},
    {457, "statmount"},         {458, "listmount"},        {459, "lsm_get_self_attr"},
    {460, "lsm_set_self_attr"}, {461, "lsm_list_modules"}, {462, "mseal"},
    {463, "setxattrat"},        {464, "getxattrat"},       {465, "listxattrat"},
    {466, "removexattrat"},     {467, "open_tree_attr"}};

}  // namespace

const SyscallSpec* syscall_spec(long nr) {
  auto it = index().find(nr);
  return it == index().end() ? nullptr : &it->second;
}

std::string syscall_name(long nr) {
  for (const auto& e : kNames)
    if (e.nr == nr) return e.name;
  if (nr == RWD_SYS_REGISTER_BUFFER) return "rewind_register_buffer";
  if (nr == RWD_SYS_DIVERGED) return "rewind_diverged";
  return "syscall_" + std::to_string(nr);
}

bool is_restart_result(int64_t result) {
  return result == -512 || result == -513 || result == -514 || result == -516;
}

long ioctl_output_size(unsigned long request) {
  // Legacy terminal requests have no size in their number (ioctl_tty(2)).
  switch (request) {
    case TCGETS:
      return 36;  // struct termios (kernel layout)
    case TIOCGWINSZ:
      return 8;
    case TIOCGPGRP:
      return 4;
    case TIOCGSID:
      return 4;
    case FIONREAD:
      return 4;
    case TIOCOUTQ:
      return 4;
    case TIOCGETD:
      return 4;
    case TIOCMGET:
      return 4;
    case TCSETS:
    case TCSETSW:
    case TCSETSF:
    case TIOCSWINSZ:
    case TIOCSPGRP:
    case FIONBIO:
    case FIOCLEX:
    case FIONCLEX:
    case FIOASYNC:
    case TCFLSH:
    case TCXONC:
    case TCSBRK:
    case TIOCSCTTY:
    case TIOCNOTTY:
    case TIOCEXCL:
    case TIOCNXCL:
      return 0;
    default:
      break;
  }
  unsigned dir = unsigned(request >> 30) & 3u;  // _IOC_DIRSHIFT, asm-generic/ioctl.h
  unsigned size = unsigned(request >> 16) & 0x3fffu;
  if (dir == 0 && (request >> 16) == 0) return -1;  // no encoding: unknown legacy request
  return (dir & 2u) ? long(size) : 0;               // _IOC_READ: the kernel writes `size` bytes
}

}  // namespace rwd
