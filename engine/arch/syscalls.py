"""Everything rewind knows about each x86-64 system call, declared once.

tools/gen_syscalls.py reads this file at build time and writes, into the build tree:
  syscall_specs.inc   the engine's table (engine/arch/syscall_table.cpp): replay policy,
                      out-parameters, output kind, may-block rule, flags
  syscall_names.inc   every syscall's name, from the kernel header plus NEWER below
  ioctl_sizes.inc     the ioctl requests known by name and what they write
  preload_rules.inc   librewind_preload.so's buffering rules (preload/rules.c)
  preload_ioctls.inc  the ioctl requests it buffers

A syscall not declared here is unsupported: recording stops with its name
(DESIGN.md "Recording"). Argument meanings come from each syscall's man page (section 2).

Vocabulary (mirrors engine/arch/syscall_table.h):
  replay   EMULATE: not run in replay; result and out-parameters come from the trace.
           EXECUTE: run for real (address space, signal state); the result must match.
           EXECUTE_SET_RESULT: run for real, then the recorded result is set (it names a tid).
           MMAP, MREMAP, FORK, EXIT, SIGRETURN, SYSV_SHM, VM_WRITE, PTRACE: run by the replayer's
           code for that kind.
  record   RECORD: run by the kernel and recorded. ENOSYS: the recorder answers -ENOSYS
           without running it (as rr does for rseq), and replay emulates that answer.
  out      out-parameters (what the kernel writes): fixed(arg, bytes), result(arg, cap_arg),
           result_times(arg, cap_arg, elem), arg_bytes(arg, size_arg),
           arg_times(arg, size_arg, elem), len_ptr(arg, len_arg), iov(arg, count_arg),
           fdset(arg, nfds_arg); fixed_always: written on failure too; on_error="INTERRUPTED":
           written when a signal interrupted the call too (-EINTR, -ERESTART*). CUSTOM: decided by an
           argument's value in engine/record/syscall_capture.cpp (ioctl, fcntl, prctl, recvmsg,
           System V IPC).
  output   BUFFER / IOV: what a write-like call sends, for replay to print it again.
  blocks   NEVER, UNLESS_REGULAR (may wait unless the fd is a regular file), MAY_BLOCK,
           FUTEX_OP (by futex operation), FCNTL_LOCK (F_SETLKW, F_OFD_SETLKW): the recorder
           lets another task run while such a call waits (rr's "desched"), and the preload
           library buffers a call that may block only with its desched counter armed.
  flags    CHANGES_MAPPINGS (may replace mapped pages), MAPS_CODE (argument 2 holds PROT bits;
           with PROT_EXEC it maps code), FORK_LIKE, EXEC, EXIT, SETS_SIGNAL_MASK (running it
           may leave the task another signal mask: it sets one, or waits under a temporary one
           that the kernel puts back only on the way to user code, signal(7)).
  buffer   how librewind_preload.so makes the call without a ptrace stop (preload/rules.h):
           kind NO_OUT, FIXED(arg, size), BY_RESULT(arg, size_arg), ITEMS_BY_RESULT(arg,
           size_arg, elem), IN_OUT_ARRAY(arg, size_arg, elem), VECTOR(kind), RUN_IN_REPLAY();
           fd is the fd_check,
           when the condition on its arguments (preload/rules.c, condition_holds). None: traced.
"""

# Sizes of kernel structures on x86-64 (bytes).
STAT, STATX, STATFS, TIMESPEC, TIMEVAL, TIMEZONE = 144, 256, 120, 16, 16, 8
RUSAGE, SIGINFO, RLIMIT, UTSNAME, SYSINFO, TMS = 144, 128, 16, 390, 112, 32
ITIMERVAL, ITIMERSPEC, SIGSET, SOCKLEN, EPOLL_EVENT, POLLFD = 32, 32, 8, 4, 12, 8
MMSGHDR, CAP_DATA, SCHED_PARAM = 64, 24, 4
TIMEX, MQ_ATTR = 208, 64


def _out(arg, rule, n=0, size_arg=-1, on_error=False):
    return dict(arg=arg, rule=rule, n=n, size_arg=size_arg, on_error=on_error)


def fixed(arg, n):
    return _out(arg, "Fixed", n)


def fixed_always(arg, n):
    return _out(arg, "Fixed", n, on_error=True)


def result(arg, cap):
    return _out(arg, "Result", size_arg=cap)


def result_times(arg, cap, n):
    return _out(arg, "ResultTimes", n, cap)


def arg_bytes(arg, size_arg):
    return _out(arg, "Arg", size_arg=size_arg)


def arg_times(arg, size_arg, n, on_error=False):
    return _out(arg, "ArgTimes", n, size_arg, on_error)


def len_ptr(arg, len_arg):
    return _out(arg, "LenPtr", size_arg=len_arg)


def iov(arg, count_arg):
    return _out(arg, "Iov", size_arg=count_arg)


def fdset(arg, nfds_arg):
    return _out(arg, "FdSet", size_arg=nfds_arg, on_error=True)


CUSTOM = "custom"


def buffered(kind, fd="ANY_FD", when="ALWAYS", arg=-1, size=0, size_arg=0, elem=0,
             vector="NOT_VECTOR"):
    return dict(kind=kind, fd=fd, when=when, arg=arg, size=size, size_arg=size_arg, elem=elem,
                vector=vector)


def NO_OUT(fd="ANY_FD", when="ALWAYS"):
    return buffered("NO_OUT", fd, when)


def RUN_IN_REPLAY():
    """Made for real in replay too (through the same instruction, where the replayer runs it
    and checks its result against the record's): brk, rt_sigaction, rt_sigprocmask. What the
    kernel writes back (an old action or mask) it writes again in replay, so the record keeps
    none of it."""
    return buffered("RUN_IN_REPLAY")


def FIXED(arg, size, fd="ANY_FD", when="ALWAYS"):
    return buffered("FIXED", fd, when, arg=arg, size=size)


def BY_RESULT(arg, size_arg, fd="ANY_FD", when="ALWAYS"):
    return buffered("BY_RESULT", fd, when, arg=arg, size_arg=size_arg)


def ITEMS_BY_RESULT(arg, size_arg, elem, fd="ANY_FD", when="ALWAYS"):
    return buffered("ITEMS_BY_RESULT", fd, when, arg=arg, size_arg=size_arg, elem=elem)


def IN_OUT_ARRAY(arg, size_arg, elem, fd="ANY_FD", when="ALWAYS"):
    return buffered("IN_OUT_ARRAY", fd, when, arg=arg, size_arg=size_arg, elem=elem)


def VECTOR(kind, fd="ANY_FD", when="ALWAYS"):
    return buffered("VECTOR", fd, when, vector=kind)


SYSCALLS = {}


def S(name, replay="EMULATE", out=(), output=None, blocks="NEVER", flags=(), record="RECORD",
      buffer=None):
    """Declares syscall `name` (its number comes from the kernel header or NEWER)."""
    assert name not in SYSCALLS, name
    SYSCALLS[name] = dict(replay=replay, out=out, output=output, blocks=blocks,
                          flags=tuple(flags), record=record, buffer=buffer)


# Syscalls newer than the build host's kernel headers: number and name.
NEWER = {451: "cachestat", 452: "fchmodat2", 453: "map_shadow_stack", 454: "futex_wake",
         455: "futex_wait", 456: "futex_requeue", 457: "statmount", 458: "listmount",
         459: "lsm_get_self_attr", 460: "lsm_set_self_attr", 461: "lsm_list_modules",
         462: "mseal", 463: "setxattrat", 464: "getxattrat", 465: "listxattrat",
         466: "removexattrat", 467: "open_tree_attr"}

# The newer syscalls whose rules are plain (the rest of NEWER stays unsupported): recorded as
# the kernel answers (ENOSYS on kernels before them), emulated in replay. Sizes from their
# uapi structs: struct cachestat is 5 u64; statmount fills its buffer, listmount writes u64
# mount ids; lsm_* take a u32 size by pointer. mseal runs for real: it decides later
# munmap/mprotect results.
CACHESTAT = 40
S("fchmodat2", buffer=NO_OUT())
S("cachestat", out=[fixed(2, CACHESTAT)])
S("futex_wake")
S("futex_wait", blocks="MAY_BLOCK")
S("futex_requeue")
S("statmount", out=[arg_bytes(1, 2)])
S("listmount", out=[result_times(1, 2, 8)])
S("lsm_get_self_attr", out=[len_ptr(1, 2), fixed(2, 4)])
S("lsm_set_self_attr")
S("lsm_list_modules", out=[len_ptr(0, 1), fixed(1, 4)])
S("mseal", replay="EXECUTE")
S("open_tree_attr")
# The xattr calls with a directory fd and AT_* flags (Linux 6.13; xattr(7)): getxattrat
# writes the value through the struct xattr_args it is given (CUSTOM).
S("setxattrat")
S("getxattrat", out=CUSTOM)
S("listxattrat", out=[result(3, 4)])
S("removexattrat")

# ioctl requests known by name (ioctl_tty(2), ioctl_fionread(2), ioctl_ficlone(2)): the bytes
# the kernel writes at argument 2 (0: nothing), and, where the preload library buffers the
# request, its fd_check. Other requests are decoded from their _IOC direction and size bits.
IOCTLS = [
    ("TCGETS", 36, "ANY_FD"),  # struct termios, the kernel's layout
    ("TIOCGWINSZ", 8, "ANY_FD"),
    ("TIOCGPGRP", 4, "ANY_FD"),
    ("TIOCGSID", 4, None),
    ("FIONREAD", 4, "ANY_FD"),
    ("TIOCOUTQ", 4, None),
    ("TIOCGETD", 4, None),
    ("TIOCMGET", 4, None),
    ("FICLONE", 0, "REGULAR_FILE"),
    ("TCSETS", 0, None),
    ("TCSETSW", 0, None),
    ("TCSETSF", 0, None),
    ("TIOCSWINSZ", 0, None),
    ("TIOCSPGRP", 0, None),
    ("FIONBIO", 0, None),
    ("FIOCLEX", 0, None),
    ("FIONCLEX", 0, None),
    ("FIOASYNC", 0, None),
    ("TCFLSH", 0, None),
    ("TCXONC", 0, None),
    ("TCSBRK", 0, None),
    ("TIOCSCTTY", 0, None),
    ("TIOCNOTTY", 0, None),
    ("TIOCEXCL", 0, None),
    ("TIOCNXCL", 0, None),
    ("TIOCGPTPEER", 0, None),  # a new descriptor, the pty's other end, as its result
    ("TIOCSTI", 0, None),
    ("TIOCMSET", 0, None),
    ("TIOCMBIS", 0, None),
    ("TIOCMBIC", 0, None),
    ("TIOCGSOFTCAR", 4, None),
    ("TIOCSSOFTCAR", 0, None),
    ("TIOCPKT", 0, None),
    ("TIOCSETD", 0, None),
    ("TIOCSBRK", 0, None),
    ("TIOCCBRK", 0, None),
    ("TIOCVHANGUP", 0, None),
    ("TIOCCONS", 0, None),
    ("TIOCSERGETLSR", 4, None),
    ("TIOCGSERIAL", 72, None),  # struct serial_struct
    ("TIOCSSERIAL", 0, None),
    ("TIOCGLCKTRMIOS", 36, None),  # struct termios
    ("TIOCSLCKTRMIOS", 0, None),
    ("TCGETA", 18, None),  # struct termio
    ("TCSETA", 0, None),
    ("TCSETAW", 0, None),
    ("TCSETAF", 0, None),
    ("TCSBRKP", 0, None),
    ("FIOQSIZE", 8, None),  # loff_t
    # Sockets (linux/sockios.h; netdevice(7)): the interface requests read and write a struct
    # ifreq (40 bytes). SIOCGIFCONF writes through the pointer in its struct ifconf (CUSTOM:
    # syscall_capture.cpp).
    ("SIOCGIFNAME", 40, None),
    ("SIOCGIFFLAGS", 40, None),
    ("SIOCGIFADDR", 40, None),
    ("SIOCGIFDSTADDR", 40, None),
    ("SIOCGIFBRDADDR", 40, None),
    ("SIOCGIFNETMASK", 40, None),
    ("SIOCGIFMETRIC", 40, None),
    ("SIOCGIFMTU", 40, None),
    ("SIOCGIFHWADDR", 40, None),
    ("SIOCGIFINDEX", 40, None),
    ("SIOCGIFTXQLEN", 40, None),
    ("SIOCGIFMAP", 40, None),
    ("SIOCSIFFLAGS", 0, None),
    ("SIOCSIFADDR", 0, None),
    ("SIOCSIFDSTADDR", 0, None),
    ("SIOCSIFBRDADDR", 0, None),
    ("SIOCSIFNETMASK", 0, None),
    ("SIOCSIFMETRIC", 0, None),
    ("SIOCSIFMTU", 0, None),
    ("SIOCSIFNAME", 0, None),
    ("SIOCSIFHWADDR", 0, None),
    ("SIOCSIFTXQLEN", 0, None),
    ("SIOCSIFMAP", 0, None),
    ("SIOCADDMULTI", 0, None),
    ("SIOCDELMULTI", 0, None),
    ("SIOCATMARK", 4, None),
    ("SIOCOUTQNSD", 4, None),
    ("SIOCGSTAMP_OLD", 16, None),  # struct timeval
    ("SIOCGSTAMPNS_OLD", 16, None),  # struct timespec
]

# fcntl commands (fcntl(2); numbers from include/uapi/linux/fcntl.h and asm-generic/fcntl.h,
# some newer than the build's headers): the bytes the kernel writes at argument 2 on success
# (0: nothing), and whether the preload library buffers the command (none of those waits:
# F_SETLKW and F_OFD_SETLKW do, and are traced). A command not listed here that succeeds stops
# the recording with a clear error: what it wrote is unknown. F_GETLK and F_OFD_GETLK also
# read the struct flock they rewrite (the lock asked about).
FCNTLS = [
    ("F_DUPFD", 0, 0, True),
    ("F_GETFD", 1, 0, True),
    ("F_SETFD", 2, 0, True),
    ("F_GETFL", 3, 0, True),
    ("F_SETFL", 4, 0, True),
    ("F_GETLK", 5, 32, True),  # struct flock
    ("F_SETLK", 6, 0, True),
    ("F_SETLKW", 7, 0, False),
    ("F_SETOWN", 8, 0, False),
    ("F_GETOWN", 9, 0, False),
    ("F_SETSIG", 10, 0, False),
    ("F_GETSIG", 11, 0, False),
    ("F_SETOWN_EX", 15, 0, False),
    ("F_GETOWN_EX", 16, 8, False),  # struct f_owner_ex
    ("F_OFD_GETLK", 36, 32, True),
    ("F_OFD_SETLK", 37, 0, True),
    ("F_OFD_SETLKW", 38, 0, False),
    ("F_SETLEASE", 1024, 0, False),
    ("F_GETLEASE", 1025, 0, False),
    ("F_NOTIFY", 1026, 0, False),
    ("F_DUPFD_QUERY", 1027, 0, False),  # Linux 6.10
    ("F_CREATED_QUERY", 1028, 0, False),  # Linux 6.12
    ("F_DUPFD_CLOEXEC", 1030, 0, True),
    ("F_SETPIPE_SZ", 1031, 0, False),
    ("F_GETPIPE_SZ", 1032, 0, True),
    ("F_ADD_SEALS", 1033, 0, False),
    ("F_GET_SEALS", 1034, 0, False),
    ("F_GET_RW_HINT", 1035, 8, False),  # a u64 write-life hint
    ("F_SET_RW_HINT", 1036, 0, False),
    ("F_GET_FILE_RW_HINT", 1037, 8, False),
    ("F_SET_FILE_RW_HINT", 1038, 0, False),
]

# --- File I/O: emulated; replay never touches the file system. ---
S("read", out=[result(1, 2)], blocks="UNLESS_REGULAR", buffer=BY_RESULT(1, 2))
S("write", output="BUFFER", blocks="UNLESS_REGULAR", buffer=NO_OUT("NOT_OUTPUT"))
S("pread64", out=[result(1, 2)], buffer=BY_RESULT(1, 2, "REGULAR_FILE"))
S("pwrite64", output="BUFFER", buffer=NO_OUT("REGULAR_NOT_OUTPUT"))
S("readv", out=[iov(1, 2)], blocks="UNLESS_REGULAR", buffer=VECTOR("IOV_READ"))
S("writev", output="IOV", blocks="UNLESS_REGULAR", buffer=NO_OUT("NOT_OUTPUT"))
S("preadv", out=[iov(1, 2)], buffer=VECTOR("IOV_READ", "REGULAR_FILE"))
S("pwritev", output="IOV", buffer=NO_OUT("REGULAR_NOT_OUTPUT"))
S("preadv2", out=[iov(1, 2)])
S("pwritev2", output="IOV")
S("open", blocks="MAY_BLOCK")
S("openat", blocks="MAY_BLOCK", buffer=NO_OUT(when="OPEN_FLAGS"))  # a FIFO waits for its peer
S("openat2")
S("creat")
S("close", buffer=NO_OUT())
S("close_range")
S("lseek", buffer=NO_OUT())
S("stat", out=[fixed(1, STAT)], buffer=FIXED(1, STAT))
S("fstat", out=[fixed(1, STAT)], buffer=FIXED(1, STAT))
S("lstat", out=[fixed(1, STAT)], buffer=FIXED(1, STAT))
S("newfstatat", out=[fixed(2, STAT)], buffer=FIXED(2, STAT))
S("statx", out=[fixed(4, STATX)], buffer=FIXED(4, STATX))
S("statfs", out=[fixed(1, STATFS)], buffer=FIXED(1, STATFS))
S("fstatfs", out=[fixed(1, STATFS)], buffer=FIXED(1, STATFS))
S("access", buffer=NO_OUT())
S("faccessat", buffer=NO_OUT())
S("faccessat2", buffer=NO_OUT())
S("readlink", out=[result(1, 2)], buffer=BY_RESULT(1, 2))
S("readlinkat", out=[result(2, 3)], buffer=BY_RESULT(2, 3))
S("getdents", out=[result(1, 2)])
# A listing of a procfs directory stays traced: /proc/PID/fd hides rewind's descriptors
# (engine/record/hidden_fds.cpp).
S("getdents64", out=[result(1, 2)], buffer=BY_RESULT(1, 2, "NOT_OUTPUT"))
S("getcwd", out=[result(0, 1)], buffer=BY_RESULT(0, 1))
S("chdir")
S("fchdir")
for _name in ["rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir", "link", "linkat",
              "unlink", "unlinkat", "symlink", "symlinkat", "chmod", "fchmod", "fchmodat",
              "chown", "fchown", "lchown", "fchownat", "utimensat", "umask"]:
    S(_name, buffer=NO_OUT())  # changes to the file system: no out-parameter
S("truncate", buffer=NO_OUT("PATH_NOT_SHARED"))  # of a file mapped shared: traced, size kept
for _name in ["mknod", "mknodat", "utime", "utimes", "futimesat", "fallocate", "sync", "syncfs",
              "sync_file_range", "readahead", "dup", "dup2", "dup3", "tee"]:
    S(_name, blocks="MAY_BLOCK" if _name == "tee" else "NEVER")
# Mounts and the root directory (mount(2), the new mount API of fsopen(2)..., chroot(2)): they
# act while recording, in the program's own mount namespace; replay resolves no path (file
# calls are emulated, exec and mmap use the trace's copies), so it emulates them.
for _name in ["mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen",
              "fsconfig", "fsmount", "fspick", "mount_setattr", "sethostname", "setdomainname"]:
    S(_name)
S("ftruncate", buffer=NO_OUT("REGULAR_NOT_OUTPUT"))  # a shared file's: its size is kept
S("fsync", buffer=NO_OUT("REGULAR_FILE"))
S("fdatasync", buffer=NO_OUT("REGULAR_FILE"))
S("flock", blocks="MAY_BLOCK")
S("fadvise64", buffer=NO_OUT("REGULAR_FILE"))
S("pipe", out=[fixed(0, 8)])
S("pipe2", out=[fixed(0, 8)])
S("sendfile", out=[fixed(2, 8)], blocks="MAY_BLOCK")
S("copy_file_range", out=[fixed(1, 8), fixed(3, 8)],
  buffer=NO_OUT("REGULAR_TO_NOT_OUTPUT", "NO_OFFSETS"))  # into a shared file: traced
S("splice", out=[fixed(1, 8), fixed(3, 8)], blocks="MAY_BLOCK")
S("vmsplice", out=[iov(1, 2)], blocks="MAY_BLOCK")  # from a pipe into the iovecs, or to one
S("getxattr", out=[result(2, 3)], buffer=BY_RESULT(2, 3))
S("lgetxattr", out=[result(2, 3)], buffer=BY_RESULT(2, 3))
S("fgetxattr", out=[result(2, 3)], buffer=BY_RESULT(2, 3, "REGULAR_FILE"))
S("listxattr", out=[result(1, 2)], buffer=BY_RESULT(1, 2))
S("llistxattr", out=[result(1, 2)], buffer=BY_RESULT(1, 2))
S("flistxattr", out=[result(1, 2)], buffer=BY_RESULT(1, 2, "REGULAR_FILE"))
S("setxattr", buffer=NO_OUT())
S("lsetxattr", buffer=NO_OUT())
S("fsetxattr", buffer=NO_OUT("REGULAR_FILE"))
S("removexattr", buffer=NO_OUT())
S("lremovexattr", buffer=NO_OUT())
S("fremovexattr")
S("memfd_create")
S("inotify_init")
S("inotify_init1")
S("fanotify_init")
S("fanotify_mark")
S("inotify_add_watch")
S("inotify_rm_watch")
S("eventfd")
S("eventfd2")
# librewind_preload.so's desched counter (and a program's own counters): replay never opens
# one; reads from it are emulated like any other.
S("perf_event_open")
S("ioctl", out=CUSTOM, buffer=NO_OUT(when="IOCTL_KNOWN"))
S("fcntl", out=CUSTOM, blocks="FCNTL_LOCK", buffer=NO_OUT(when="FCNTL_KNOWN"))

# --- Waiting for I/O. ---
# poll and ppoll write every revents back even when a signal interrupts them (do_sys_poll).
S("poll", out=[arg_times(0, 1, POLLFD, on_error="INTERRUPTED")], blocks="MAY_BLOCK",
  buffer=IN_OUT_ARRAY(0, 1, POLLFD))
S("ppoll", out=[arg_times(0, 1, POLLFD, on_error="INTERRUPTED"), fixed_always(2, TIMESPEC)],
  blocks="MAY_BLOCK", flags=["SETS_SIGNAL_MASK"],
  buffer=IN_OUT_ARRAY(0, 1, POLLFD, when="PPOLL_PLAIN"))
S("select", out=[fdset(1, 0), fdset(2, 0), fdset(3, 0), fixed_always(4, TIMEVAL)],
  blocks="MAY_BLOCK")
S("pselect6", out=[fdset(1, 0), fdset(2, 0), fdset(3, 0), fixed_always(4, TIMESPEC)],
  blocks="MAY_BLOCK", flags=["SETS_SIGNAL_MASK"])
S("epoll_create")
S("epoll_create1")
S("epoll_ctl")
S("epoll_wait", out=[result_times(1, 2, EPOLL_EVENT)], blocks="MAY_BLOCK",
  buffer=ITEMS_BY_RESULT(1, 2, EPOLL_EVENT))
S("epoll_pwait", out=[result_times(1, 2, EPOLL_EVENT)], blocks="MAY_BLOCK",
  flags=["SETS_SIGNAL_MASK"],
  buffer=ITEMS_BY_RESULT(1, 2, EPOLL_EVENT, when="ARG4_NULL"))  # no signal mask
S("epoll_pwait2", out=[result_times(1, 2, EPOLL_EVENT)], blocks="MAY_BLOCK",
  flags=["SETS_SIGNAL_MASK"])

# --- Sockets: emulated, so replay works with the peer gone. ---
S("socket")
S("socketpair", out=[fixed(3, 8)])
S("connect", blocks="MAY_BLOCK")
S("bind")
S("listen")
S("accept", out=[len_ptr(1, 2), fixed(2, SOCKLEN)], blocks="MAY_BLOCK")
S("accept4", out=[len_ptr(1, 2), fixed(2, SOCKLEN)], blocks="MAY_BLOCK")
S("getsockname", out=[len_ptr(1, 2), fixed(2, SOCKLEN)])
S("getpeername", out=[len_ptr(1, 2), fixed(2, SOCKLEN)])
S("getsockopt", out=[len_ptr(3, 4), fixed(4, SOCKLEN)])
S("setsockopt")
S("shutdown")
S("sendto", output="BUFFER", blocks="MAY_BLOCK", buffer=NO_OUT("NOT_OUTPUT"))
S("recvfrom", out=[result(1, 2), len_ptr(4, 5), fixed(5, SOCKLEN)], blocks="MAY_BLOCK",
  buffer=BY_RESULT(1, 2, when="ARG4_NULL"))  # no source address
# sendmsg reads the header and writes nothing; recvmsg without control data (hook.c).
S("sendmsg", blocks="MAY_BLOCK", buffer=NO_OUT("NOT_OUTPUT"))
S("recvmsg", out=CUSTOM, blocks="MAY_BLOCK", buffer=VECTOR("MSG_READ"))
S("sendmmsg", out=[result_times(1, 2, MMSGHDR)], blocks="MAY_BLOCK")
S("recvmmsg", out=CUSTOM, blocks="MAY_BLOCK")  # each message as recvmsg's, and its msg_len

# --- POSIX message queues (mq_overview(7)) and System V IPC (sysvipc(7)): emulated; what a
# receive or a control call writes is recorded. A System V shared memory segment is memory
# shared between processes, like MAP_SHARED|MAP_ANONYMOUS (shmop(2)): shmat records the
# segment's contents at the attach and replay attaches a segment of the replayer's own
# (engine/replay/sysv_segments.h); shmctl's IPC_RMID drops it there. ---
S("mq_open")
S("mq_unlink")
S("mq_timedsend", blocks="MAY_BLOCK")
S("mq_timedreceive", out=[result(1, 2), fixed(3, 4)], blocks="MAY_BLOCK")
S("mq_notify")
S("mq_getsetattr", out=[fixed(2, MQ_ATTR)])
S("msgget")
S("msgsnd", blocks="MAY_BLOCK")
S("msgrcv", out=CUSTOM, blocks="MAY_BLOCK")  # the message type, then the text
S("msgctl", out=CUSTOM)
S("semget")
S("semop", blocks="MAY_BLOCK")
S("semtimedop", blocks="MAY_BLOCK")
S("semctl", out=CUSTOM)
S("shmget")
S("shmat", replay="SYSV_SHM", out=CUSTOM, flags=["CHANGES_MAPPINGS", "RETURNS_ADDRESS"])
S("shmdt", replay="EXECUTE", flags=["CHANGES_MAPPINGS"])
S("shmctl", replay="SYSV_SHM", out=CUSTOM)

# --- Time and randomness: the nondeterminism rewind exists to capture. ---
S("clock_gettime", out=[fixed(1, TIMESPEC)], buffer=FIXED(1, TIMESPEC, when="ARG1_SET"))
S("clock_getres", out=[fixed(1, TIMESPEC)])
S("gettimeofday", out=[fixed(0, TIMEVAL), fixed(1, TIMEZONE)],
  buffer=FIXED(0, TIMEVAL, when="TV_ONLY"))
S("time", out=[fixed(0, 8)])
S("nanosleep", out=[fixed_always(1, TIMESPEC)], blocks="MAY_BLOCK")
S("clock_nanosleep", out=[fixed_always(3, TIMESPEC)], blocks="MAY_BLOCK")
S("getrandom", out=[result(0, 1)], buffer=BY_RESULT(0, 1, when="NONBLOCK_RANDOM"))
S("times", out=[fixed(0, TMS)])
S("getitimer", out=[fixed(1, ITIMERVAL)])
S("setitimer", out=[fixed(2, ITIMERVAL)])
S("alarm")
S("timer_create", out=[fixed(2, 4)])
S("timer_settime", out=[fixed(3, ITIMERSPEC)])
S("timer_gettime", out=[fixed(1, ITIMERSPEC)])
S("timer_getoverrun")
S("timer_delete")
S("timerfd_create")
S("timerfd_settime", out=[fixed(3, ITIMERSPEC)])
S("timerfd_gettime", out=[fixed(1, ITIMERSPEC)])
S("clock_settime")  # the kernel's answer (EPERM unless privileged) is recorded
S("clock_adjtime", out=[fixed(1, TIMEX)])
S("adjtimex", out=[fixed(0, TIMEX)])

# --- Identity and system information. ---
for _name in ["getpid", "getppid", "gettid", "getuid", "geteuid", "getgid", "getegid",
              "getpgrp"]:
    S(_name, buffer=NO_OUT())
S("getresuid", out=[fixed(0, 4), fixed(1, 4), fixed(2, 4)])
S("getresgid", out=[fixed(0, 4), fixed(1, 4), fixed(2, 4)])
S("getgroups", out=[result_times(1, 0, 4)])
for _name in ["setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
              "getpgid", "setpgid", "getsid", "setsid", "capset", "setrlimit", "getpriority",
              "setpriority", "personality", "sched_setaffinity", "sched_setparam",
              "sched_getscheduler", "sched_setscheduler", "sched_get_priority_max",
              "sched_get_priority_min", "ioprio_get", "ioprio_set", "membarrier"]:
    S(_name)
S("capget", out=[fixed(0, 8), fixed(1, CAP_DATA)])
S("uname", out=[fixed(0, UTSNAME)], buffer=FIXED(0, UTSNAME))
S("sysinfo", out=[fixed(0, SYSINFO)], buffer=FIXED(0, SYSINFO))
# Reading limits only is buffered: a new limit stays traced (the kernel's behaviour in replay
# can depend on it).
S("getrlimit", out=[fixed(1, RLIMIT)], buffer=FIXED(1, RLIMIT))
S("prlimit64", out=[fixed(3, RLIMIT)], buffer=FIXED(3, RLIMIT, when="ARG2_NULL"))
S("getrusage", out=[fixed(1, RUSAGE)], buffer=FIXED(1, RUSAGE))
S("prctl", out=CUSTOM)
# The program's own filters (seccomp(2)) act while recording; their answers (an errno, a
# SIGSYS) are recorded like any result or signal, so replay installs none.
S("seccomp", out=CUSTOM)
S("getcpu", out=[fixed(0, 4), fixed(1, 4)])
S("sched_yield", blocks="MAY_BLOCK")
S("sched_getaffinity", out=[result(2, 1)])
S("sched_getparam", out=[fixed(1, SCHED_PARAM)])
S("sched_rr_get_interval", out=[fixed(1, TIMESPEC)])
S("futex_waitv", blocks="MAY_BLOCK")
S("kcmp")
# Landlock (landlock(7)): the ruleset applies while recording; replay emulates the answers.
for _name in ["landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"]:
    S(_name)
S("sched_getattr", out=[arg_bytes(1, 2)])
# The kernel's answer is recorded; replay needs none of their effects (filesystem ids are
# checked by calls replay emulates; no scheduling, clock or terminal state is replayed).
for _name in ["setfsuid", "setfsgid", "sched_setattr", "settimeofday", "vhangup",
              "process_mrelease", "open_by_handle_at"]:
    S(_name)
S("name_to_handle_at", out=CUSTOM)
# Keyrings (keyrings(7)) live in the kernel, outside the process: answers recorded.
S("add_key")
S("request_key", blocks="MAY_BLOCK")  # may wait for /sbin/request-key to build the key
S("keyctl", out=CUSTOM)
# The kernel log (syslog(2)): the read actions write the bytes they return (CUSTOM).
S("syslog", out=CUSTOM)
S("ustat", out=[fixed(1, 32)])  # struct ustat
# The machine's administration (reboot(2), swapon(2), init_module(2), delete_module(2),
# kexec_load(2)): what the kernel answered is recorded; replay never runs them, so a replay
# cannot reboot the machine, swap or load a module, whatever the recording did.
for _name in ["reboot", "swapon", "swapoff", "init_module", "finit_module", "delete_module",
              "kexec_load", "kexec_file_load"]:
    S(_name)
# sysfs(2) option 2 copies a type's name; quotactl(2) and quotactl_fd(2) write by command
# (engine/record/syscall_capture.cpp).
for _name in ["sysfs", "quotactl", "quotactl_fd"]:
    S(_name, out=CUSTOM)
# eBPF (bpf(2)): maps and programs live in the recording's kernel; replay emulates every
# command from what was recorded (looked-up values, the verifier's log, ids and info).
# Commands that attach programs or run them are refused (engine/record/bpf_capture.h).
S("bpf", out=CUSTOM)
# In the kernel's table but not implemented (sys_ni_syscall): ENOSYS, as natively, recorded.
for _name in ["_sysctl", "create_module", "get_kernel_syms", "query_module", "nfsservctl",
              "getpmsg", "putpmsg", "afs_syscall", "tuxcall", "security", "lookup_dcookie",
              "epoll_ctl_old", "epoll_wait_old", "vserver"]:
    S(_name)
S("futex", blocks="FUTEX_OP", buffer=NO_OUT(when="FUTEX_KNOWN"))
S("get_robust_list", out=[fixed(1, 8), fixed(2, 8)])
S("set_robust_list", replay="EXECUTE")
S("set_tid_address", replay="EXECUTE_SET_RESULT")
# Restartable sequences let the kernel write the CPU number into memory at any time: reported
# unavailable, as rr does, and glibc falls back to plain syscalls.
S("rseq", record="ENOSYS")
# io_uring shares rings of requests with the kernel, which completes them at any time; a
# userfaultfd's faults are answered by another thread. Both unavailable, as rr does: liburing
# users fall back to plain syscalls.
for _name in ["io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd"]:
    S(_name, record="ENOSYS")
# Kernel AIO (io_setup(2)) maps a completion ring the kernel fills at any time; a secret memory
# (memfd_secret(2)) is hidden from ptrace, so its pages can be neither digested nor copied; and
# uselib(2) maps a library outside mmap. All reported unavailable: libaio users fall back
# (or say so), as with io_uring.
for _name in ["io_setup", "io_destroy", "io_getevents", "io_pgetevents", "io_submit",
              "io_cancel", "memfd_secret", "uselib"]:
    S(_name, record="ENOSYS")
# A shadow stack (map_shadow_stack(2), x86 CET) makes every return check a second stack the
# replay's trampolines and injected calls do not keep: reported unavailable, as glibc's
# shadow-stack support expects of a kernel without it.
S("map_shadow_stack", record="ENOSYS")

# --- Address space: run for real at the recorded addresses. ---
# brk is buffered: it never blocks and changes nothing but the heap's end, which replay gets
# by making it again (RUN_IN_REPLAY); the result must be the recorded one.
S("brk", replay="EXECUTE", flags=["RETURNS_ADDRESS"], buffer=RUN_IN_REPLAY())
S("mmap", replay="MMAP", flags=["CHANGES_MAPPINGS", "MAPS_CODE", "RETURNS_ADDRESS"])
S("munmap", replay="EXECUTE", flags=["CHANGES_MAPPINGS"])
S("mprotect", replay="EXECUTE", flags=["MAPS_CODE"])
S("mremap", replay="MREMAP", flags=["CHANGES_MAPPINGS", "RETURNS_ADDRESS"])
S("madvise", replay="EXECUTE")
for _name in ["msync", "mlock", "mlock2", "munlock", "mlockall", "munlockall"]:
    S(_name)
S("mincore", out=CUSTOM)  # one byte per page of the range
# NUMA placement and page advice to other processes change where pages live, not what they
# hold (set_mempolicy(2), mbind(2), migrate_pages(2), process_madvise(2)).
for _name in ["set_mempolicy", "mbind", "migrate_pages", "move_pages", "set_mempolicy_home_node",
              "process_madvise"]:
    S(_name)
S("get_mempolicy", out=CUSTOM)  # the mode, then a node mask of maxnode bits
S("arch_prctl", replay="EXECUTE")
# A TLS descriptor in the GDT, for 32-bit segments (set_thread_area(2)): thread state later
# instructions may load, so replay sets it too; the kernel writes the entry it chose back.
S("set_thread_area", replay="EXECUTE", out=[fixed(0, 16)])
S("get_thread_area", out=[fixed(0, 16)])
# remap_file_pages(2), deprecated: the kernel remaps the pages of a shared file mapping, and
# replay does the same to its own mapping.
S("remap_file_pages", replay="EXECUTE", flags=["CHANGES_MAPPINGS"])
# The LDT and I/O port permissions are process state later instructions depend on.
S("modify_ldt", replay="EXECUTE")
S("iopl", replay="EXECUTE")
S("ioperm", replay="EXECUTE")
# Memory protection keys (pkeys(7)): the keys and the pages' keys are process state that later
# faults depend on, so replay runs them too (V8, and so Node.js, allocates one at start).
S("pkey_alloc", replay="EXECUTE")
S("pkey_free", replay="EXECUTE")
S("pkey_mprotect", replay="EXECUTE", flags=["MAPS_CODE"])

# --- Signals: handler state is real in replay, so that faults are delivered the same way. ---
# rt_sigaction and rt_sigprocmask are buffered and made again in replay (RUN_IN_REPLAY): the
# recorder reads dispositions and masks from the kernel when it needs them (/proc/TID/status),
# never from these calls, and the kernel writes the old action or mask in replay as it did
# when recorded. A posix_spawn child resets every handled signal before its exec (glibc's
# __spawni_child): 120-odd calls a spawn, each one a ptrace stop when traced.
S("rt_sigaction", replay="EXECUTE", buffer=RUN_IN_REPLAY())
S("rt_sigprocmask", replay="EXECUTE", flags=["SETS_SIGNAL_MASK"], buffer=RUN_IN_REPLAY())
S("sigaltstack", replay="EXECUTE")
# rt_sigreturn restores the registers and the mask saved in the signal frame.
S("rt_sigreturn", replay="SIGRETURN", flags=["SETS_SIGNAL_MASK"])
S("rt_sigpending", out=[fixed(0, SIGSET)])
S("rt_sigtimedwait", out=[fixed(1, SIGINFO)], blocks="MAY_BLOCK", flags=["SETS_SIGNAL_MASK"])
S("rt_sigsuspend", blocks="MAY_BLOCK", flags=["SETS_SIGNAL_MASK"])
S("pause", blocks="MAY_BLOCK")
for _name in ["kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "signalfd",
              "signalfd4"]:
    S(_name)
S("restart_syscall", blocks="MAY_BLOCK")

# --- Processes. ---
for _name in ["fork", "vfork", "clone", "clone3"]:
    S(_name, replay="FORK", flags=["FORK_LIKE"])
# A successful exec is an Exec event of its own; a syscall event is a failed exec, emulated.
S("execve", flags=["EXEC"])
S("execveat", flags=["EXEC"])
S("exit", replay="EXIT", flags=["EXIT"])
S("exit_group", replay="EXIT", flags=["EXIT"])
S("wait4", out=[fixed(1, 4), fixed(3, RUSAGE)], blocks="MAY_BLOCK")
S("waitid", out=[fixed(2, SIGINFO), fixed(4, RUSAGE)], blocks="MAY_BLOCK")
S("pidfd_open")
# Namespaces (namespaces(7)): recorded as the kernel answered, emulated in replay (the
# replayed process stays where it was: its file and identity calls are emulated too). In a PID
# namespace the recorder records the numbers the program knows its new tasks by (NSpid).
S("unshare")
S("setns")
S("pidfd_getfd")
S("process_vm_readv", out=[iov(1, 2)])  # into this process's iovecs
# Into another process's memory: replay writes the same bytes into the replayed process the
# recorded pid names (a process outside the recording is not replayed).
S("process_vm_writev", replay="VM_WRITE")
S("acct")
S("pidfd_send_signal")
# The program's own ptrace(2): rewind is every recorded task's real tracer, so the recorder
# answers it as the kernel would (engine/record/ptrace_emulation.cpp); replay gives the
# answer back, and makes a request that changed the tracee again on the replayed one.
S("ptrace", replay="PTRACE")
