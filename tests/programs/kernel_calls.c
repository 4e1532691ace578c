// Test program for syscalls a recording must answer as the kernel does (issue 31): keyrings
// (add_key, request_key, keyctl), file handles (name_to_handle_at, open_by_handle_at),
// setfsuid/setfsgid, sched_setattr, settimeofday, vhangup, process_mrelease, syslog, ustat,
// the xattr calls with a directory fd (setxattrat, getxattrat...), names the
// kernel keeps in its table but does not implement (ENOSYS natively), and the calls rewind
// reports unavailable (kernel AIO, memfd_secret, uselib, packet rings); the machine's
// administration calls (reboot, swapon, module and kexec loading: each made so that the kernel
// refuses it), sysfs, quotactl, set_thread_area and remap_file_pages; a socket's interface
// ioctls (SIOCGIFCONF, SIOCGIFINDEX...: netdevice(7)). Prints what each returned;
// the test compares a native run, the recording and its replays.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/keyctl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* said(long r) {
  static char buf[64];
  if (r >= 0) return "ok";
  snprintf(buf, sizeof buf, "%s", strerror(errno));
  return buf;
}

static void keyrings(void) {
  long key = syscall(SYS_add_key, "user", "rewind-test", "payload", 7, KEY_SPEC_PROCESS_KEYRING);
  if (key < 0) {
    printf("add_key %s\n", said(key));
    return;
  }
  char buf[128] = {0};
  long n = syscall(SYS_keyctl, KEYCTL_READ, key, buf, sizeof buf);
  printf("keyctl read %ld: %.*s\n", n, n > 0 ? (int)n : 0, buf);
  memset(buf, 0, sizeof buf);
  n = syscall(SYS_keyctl, KEYCTL_DESCRIBE, key, buf, sizeof buf);
  const char* type_end = strchr(buf, ';');
  printf("keyctl describe %ld: type %.*s, name %s\n", n, type_end ? (int)(type_end - buf) : 0, buf,
         strrchr(buf, ';') ? strrchr(buf, ';') + 1 : "?");
  long found = syscall(SYS_request_key, "user", "rewind-test", NULL, 0);
  printf("request_key found the same key: %s\n", found == key ? "yes" : said(found));
  long r = syscall(SYS_keyctl, KEYCTL_REVOKE, key);
  n = syscall(SYS_keyctl, KEYCTL_READ, key, buf, sizeof buf);
  printf("revoke %s, read after it: %s\n", said(r), said(n));
}

static void file_handles(void) {
  struct {
    unsigned int handle_bytes;
    int handle_type;
    unsigned char f_handle[128];
  } fh = {.handle_bytes = 128};
  int mount_id = -1;
  long r =
      syscall(SYS_name_to_handle_at, AT_FDCWD, "/proc/self/exe", &fh, &mount_id, AT_SYMLINK_FOLLOW);
  printf("name_to_handle_at %s\n", said(r));
  if (r < 0) return;
  int dir = open("/", O_RDONLY | O_DIRECTORY);
  long fd = syscall(SYS_open_by_handle_at, dir, &fh, O_RDONLY);
  struct stat a, b;
  int same = fd >= 0 && fstat((int)fd, &a) == 0 && stat("/proc/self/exe", &b) == 0 &&
             a.st_ino == b.st_ino && a.st_dev == b.st_dev;
  printf("open_by_handle_at %s, same file %s\n", said(fd), same ? "yes" : "no");
  if (fd >= 0) close((int)fd);
  close(dir);
}

static void credentials_and_scheduling(void) {
  long uid = syscall(SYS_setfsuid, -1), gid = syscall(SYS_setfsgid, -1);  // -1: query only
  printf("fsuid %s, fsgid %s\n", uid == (long)geteuid() ? "euid" : "other",
         gid == (long)getegid() ? "egid" : "other");
  struct {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
  } attr = {.size = 48, .policy = SCHED_OTHER};
  long r = syscall(SYS_sched_setattr, 0, &attr, 0);
  printf("sched_setattr %s\n", said(r));
  r = syscall(SYS_settimeofday, NULL, NULL);  // nothing to set
  printf("settimeofday %s\n", said(r));
  pid_t child = fork();
  if (child == 0) {  // a new session has no controlling terminal to hang up
    setsid();
    _exit(syscall(SYS_vhangup) == 0 ? 0 : errno);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("vhangup in a new session: %s\n",
         WEXITSTATUS(status) ? strerror(WEXITSTATUS(status)) : "ok");
  child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
  r = syscall(SYS_process_mrelease, pidfd, 0);  // not dying: EINVAL
  printf("process_mrelease of a live child: %s\n", said(r));
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  close(pidfd);
}

static void kernel_log_and_xattrs(void) {
  char buf[4096];
  long n = syscall(SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
  printf("syslog size %s\n", n > 0 ? "ok" : said(n));
  n = syscall(SYS_syslog, 3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof buf);
  unsigned sum = 0;
  for (long i = 0; i < n; ++i) sum = sum * 31 + (unsigned char)buf[i];
  printf("syslog read %s, checksum %s\n", said(n), n > 0 ? "taken" : "none");
  if (n > 0) fprintf(stderr, "syslog checksum %u over %ld bytes\n", sum, n);  // compared too
  char ustat_buf[32];
  n = syscall(SYS_ustat, 0, ustat_buf);
  printf("ustat %s\n", said(n));
  // The *xattrat calls (Linux 6.13): ENOSYS on older kernels, as natively.
  char path[] = "kernel_calls.xattr";
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  struct {
    uint64_t value;
    uint32_t size, flags;
  } args = {(uint64_t)(uintptr_t) "forty-two", 9, 0};
  n = syscall(463 /* setxattrat */, AT_FDCWD, path, 0, "user.rewind", &args, sizeof args);
  printf("setxattrat %s\n", said(n));
  char value[32] = {0};
  args.value = (uint64_t)(uintptr_t)value;
  args.size = sizeof value;
  n = syscall(464 /* getxattrat */, AT_FDCWD, path, 0, "user.rewind", &args, sizeof args);
  printf("getxattrat %s: %s\n", said(n), value);
  char names[64] = {0};
  n = syscall(465 /* listxattrat */, AT_FDCWD, path, 0, names, sizeof names);
  printf("listxattrat %s: %s\n", said(n), names);
  n = syscall(466 /* removexattrat */, AT_FDCWD, path, 0, "user.rewind");
  printf("removexattrat %s\n", said(n));
  close(fd);
  unlink(path);
}

static void not_implemented(void) {
  // In the kernel's table, answered by sys_ni_syscall.
  static const struct {
    const char* name;
    long nr;
  } calls[] = {{"_sysctl", 156},        {"create_module", 174},  {"get_kernel_syms", 177},
               {"query_module", 178},   {"nfsservctl", 180},     {"getpmsg", 181},
               {"putpmsg", 182},        {"afs_syscall", 183},    {"tuxcall", 184},
               {"security", 185},       {"lookup_dcookie", 212}, {"epoll_ctl_old", 214},
               {"epoll_wait_old", 215}, {"vserver", 236}};
  for (unsigned i = 0; i < sizeof calls / sizeof calls[0]; ++i) {
    long r = syscall(calls[i].nr, 0, 0, 0, 0, 0, 0);
    printf("%s %s\n", calls[i].name, said(r));
  }
}

static void admin_calls(void) {
  // Calls that change the machine, each made so that the kernel refuses it (the same answer
  // natively and recorded; replay never runs them).
  long r = syscall(SYS_reboot, 0, 0, 0, NULL);  // wrong magic numbers: EINVAL
  printf("reboot with bad magic: %s\n", said(r));
  r = syscall(SYS_swapon, "/nonexistent/rewind-swap", 0);
  printf("swapon of a missing file: %s\n", said(r));
  r = syscall(SYS_swapoff, "/nonexistent/rewind-swap");
  printf("swapoff of a missing file: %s\n", said(r));
  r = syscall(SYS_init_module, NULL, 0, "");
  printf("init_module of nothing: %s\n", said(r));
  r = syscall(SYS_finit_module, -1, "", 0);
  printf("finit_module of a bad fd: %s\n", said(r));
  r = syscall(SYS_delete_module, "rewind_no_such_module", O_NONBLOCK);
  printf("delete_module of a missing module: %s\n", said(r));
  r = syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000ul);  // unknown flags
  printf("kexec_load with bad flags: %s\n", said(r));
  r = syscall(SYS_kexec_file_load, -1, -1, 0, "", 0xdead0000ul);
  printf("kexec_file_load with bad flags: %s\n", said(r));
}

static void filesystems_and_quotas(void) {
  // sysfs(2): the number of filesystem types, the index of "proc", and that index's name.
  long count = syscall(SYS_sysfs, 3), index = syscall(SYS_sysfs, 1, "proc");
  char name[256] = {0};
  long r = index >= 0 ? syscall(SYS_sysfs, 2, index, name) : -1;
  printf("sysfs: %s types, proc's index %s, its name %s (%s)\n", count > 0 ? "some" : said(count),
         index >= 0 ? "found" : said(index), name, said(r));
  // quotactl(2) Q_GETFMT and Q_GETINFO (QCMD(0x800004 and 0x800005, USRQUOTA)) on the root
  // file system's user quotas: most systems have none, the answer is what the kernel says.
  uint32_t fmt = 0;
  r = syscall(SYS_quotactl, 0x80000400, "/", 0, &fmt);
  printf("quotactl Q_GETFMT: %s, format %u\n", said(r), r == 0 ? fmt : 0);
  uint64_t info[3] = {0};
  r = syscall(SYS_quotactl, 0x80000500, "/", 0, info);
  printf("quotactl Q_GETINFO: %s\n", said(r));
  int root = open("/", O_RDONLY | O_DIRECTORY);
  r = syscall(443 /* quotactl_fd */, root, 0x80000400, 0, &fmt);
  printf("quotactl_fd Q_GETFMT: %s\n", said(r));
  close(root);
}

static void thread_area(void) {
  // set_thread_area(2) on x86-64: a TLS descriptor in the GDT for 32-bit code; entry -1 asks
  // the kernel to choose one, and it writes the entry it chose back.
  struct {
    unsigned int entry_number, base_addr, limit;
    unsigned int flags;
  } desc = {(unsigned)-1, 0x1000, 0xfff, 0x51 /* seg_32bit, limit_in_pages, useable */};
  long r = syscall(SYS_set_thread_area, &desc);
  printf("set_thread_area %s, entry %s\n", said(r),
         r == 0 && desc.entry_number != (unsigned)-1 ? "chosen" : "none");
  if (r != 0) return;
  unsigned chosen = desc.entry_number;
  memset(&desc, 0, sizeof desc);
  desc.entry_number = chosen;
  r = syscall(SYS_get_thread_area, &desc);
  printf("get_thread_area %s: base %#x limit %#x\n", said(r), desc.base_addr, desc.limit);
}

static void remapped_pages(void) {
  // remap_file_pages(2) (deprecated, emulated by the kernel): the first page of a shared file
  // mapping shows the file's second page.
  char path[] = "kernel_calls.remap";
  int fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0600);
  char page[4096];
  for (int i = 0; i < 2; ++i) {
    memset(page, 'a' + i, sizeof page);
    write(fd, page, sizeof page);
  }
  char* m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  long r = syscall(SYS_remap_file_pages, m, 4096, 0, 1, 0);
  printf("remap_file_pages %s: first page now holds '%c', second '%c'\n", said(r), m[0], m[4096]);
  munmap(m, 2 * 4096);
  close(fd);
  unlink(path);
}

static void unavailable(void) {
  // Natively these may work; recorded they report ENOSYS (the kernel writes an AIO ring and a
  // secret memory's pages where rewind cannot follow).
  unsigned long ctx = 0;
  long r = syscall(SYS_io_setup, 4, &ctx);
  printf("io_setup %s\n", r == 0 ? "worked" : strerror(errno));
  if (r == 0) syscall(SYS_io_destroy, ctx);
  r = syscall(447 /* memfd_secret */, 0);
  printf("memfd_secret %s\n", r >= 0 ? "worked" : strerror(errno));
  if (r >= 0) close((int)r);
  // A packet socket's receive and transmit rings, which the kernel fills while the program
  // runs (packet(7), PACKET_MMAP): ENOPROTOOPT recorded, as rr answers. Without CAP_NET_RAW
  // the socket itself is refused.
  int packets = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  if (packets < 0) {
    printf("PACKET_RX_RING Protocol not available (no packet socket: %s)\n", strerror(errno));
    printf("PACKET_TX_RING Protocol not available (no packet socket)\n");
    return;
  }
  struct tpacket_req req = {
      .tp_block_size = 4096, .tp_block_nr = 1, .tp_frame_size = 2048, .tp_frame_nr = 2};
  r = setsockopt(packets, SOL_PACKET, PACKET_RX_RING, &req, sizeof req);
  printf("PACKET_RX_RING %s\n", r == 0 ? "worked" : strerror(errno));
  r = setsockopt(packets, SOL_PACKET, PACKET_TX_RING, &req, sizeof req);
  printf("PACKET_TX_RING %s\n", r == 0 ? "worked" : strerror(errno));
  int one = 1;
  r = setsockopt(packets, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // others still work
  printf("SO_REUSEADDR %s\n", r == 0 ? "worked" : strerror(errno));
  close(packets);
}

// The loopback interface seen through a socket's ioctls (netdevice(7)): the list's length,
// then the list (SIOCGIFCONF writes through the pointer in struct ifconf), and lo's index,
// flags, MTU and address.
static void interface_ioctls(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifconf conf = {.ifc_len = 0, .ifc_buf = NULL};
  int r = ioctl(s, SIOCGIFCONF, &conf);
  printf("SIOCGIFCONF length %d: %s\n", r, r == 0 && conf.ifc_len > 0 ? "some" : strerror(errno));
  struct ifreq list[16];
  conf.ifc_len = sizeof list;
  conf.ifc_req = list;
  r = ioctl(s, SIOCGIFCONF, &conf);
  int lo = -1;
  for (int i = 0; r == 0 && i < conf.ifc_len / (int)sizeof list[0]; ++i)
    if (strcmp(list[i].ifr_name, "lo") == 0) lo = i;
  printf("SIOCGIFCONF %d: lo listed %d, %s\n", r, lo >= 0,
         lo >= 0 ? inet_ntoa(((struct sockaddr_in*)&list[lo].ifr_addr)->sin_addr) : "-");
  struct ifreq q;
  memset(&q, 0, sizeof q);
  strcpy(q.ifr_name, "lo");
  r = ioctl(s, SIOCGIFINDEX, &q);
  printf("SIOCGIFINDEX lo %d: %d\n", r, q.ifr_ifindex);
  r = ioctl(s, SIOCGIFFLAGS, &q);
  printf("SIOCGIFFLAGS lo %d: loopback %d up %d\n", r, !!(q.ifr_flags & IFF_LOOPBACK),
         !!(q.ifr_flags & IFF_UP));
  r = ioctl(s, SIOCGIFMTU, &q);
  printf("SIOCGIFMTU lo %d: %d\n", r, q.ifr_mtu);
  memset(&q.ifr_ifru, 0, sizeof q.ifr_ifru);
  r = ioctl(s, SIOCGIFNAME, &(struct ifreq){.ifr_ifindex = 1});
  printf("SIOCGIFNAME 1: %d\n", r);
  close(s);
}

int main(int argc, char** argv) {
  keyrings();
  file_handles();
  credentials_and_scheduling();
  kernel_log_and_xattrs();
  not_implemented();
  admin_calls();
  filesystems_and_quotas();
  thread_area();
  remapped_pages();
  interface_ioctls();
  if (argc > 1 && strcmp(argv[1], "unavailable") == 0) unavailable();
  printf("kernel_calls done\n");
  return 0;
}
