/* For the syscall buffering test: one call of each kind librewind_preload.so buffers beyond
 * plain file reads (file system changes, links, locks, terminal and pipe ioctls, limits,
 * clocks, randomness, getpid through its `mov $NR, %eax; syscall` site), printing what each
 * returned. Several results differ from run to run (random bytes, clocks, uptime, resource
 * usage), so a replay prints the same lines only if it used the recorded results.
 * Usage: fs_calls DIR (an empty directory it may write in). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/xattr.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static char path_buf[4][512];

static const char* in_dir(const char* dir, int slot, const char* name) {
  snprintf(path_buf[slot], sizeof path_buf[slot], "%s/%s", dir, name);
  return path_buf[slot];
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* dir = argv[1];
  char buf[512];
  int r;
  printf("getcwd %s\n", getcwd(buf, sizeof buf) ? "ok" : strerror(errno));
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = 0;
  printf("exe %s\n", strrchr(buf, '/') ? strrchr(buf, '/') + 1 : buf);

  const char* sub = in_dir(dir, 0, "sub");
  printf("mkdir %d\n", mkdir(sub, 0755));
  const char* a = in_dir(dir, 1, "sub/a");
  int fd = open(a, O_RDWR | O_CREAT | O_TRUNC, 0644);
  printf("write %zd\n", write(fd, "hello, buffer\n", 14));
  printf("fsync %d ftruncate %d\n", fsync(fd), ftruncate(fd, 5));
  printf("fchmod %d\n", fchmod(fd, 0600));
  printf("fchown %d\n", fchown(fd, getuid(), getgid()));
  printf("flags %#x\n", fcntl(fd, F_GETFL) & O_ACCMODE);
  struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
  printf("setlk %d\n", fcntl(fd, F_SETLK, &lk));
  struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
  r = fcntl(fd, F_GETLK, &q);
  printf("getlk %d type %d\n", r, q.l_type);
  // Open file description locks (fcntl(2)): two descriptions of one file conflict, and a
  // query answers about the range its struct names, which the kernel reads first.
  int fa = open(a, O_RDWR), fb = open(a, O_RDWR);
  struct flock held = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 2048, .l_len = 1024};
  printf("ofd setlk %d\n", fcntl(fa, F_OFD_SETLK, &held));
  struct flock below = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 1024, .l_len = 1024};
  r = fcntl(fb, F_OFD_GETLK, &below);
  printf("ofd getlk [1024,2048) %d type %d\n", r, below.l_type);
  struct flock back = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 4096, .l_len = -2048};
  r = fcntl(fb, F_OFD_GETLK, &back);
  printf("ofd getlk [2048,4096) %d type %d start %ld len %ld\n", r, back.l_type, (long)back.l_start,
         (long)back.l_len);
  close(fa);
  close(fb);
  int fd2 = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  printf("dupfd %d cloexec %d\n", fd2 >= 10, fcntl(fd2, F_GETFD));
  // A write-life hint (fcntl(2), Linux 4.13): the kernel writes the u64 back at the pointer.
  uint64_t hint = 3, got = 99;  // RWH_WRITE_LIFE_MEDIUM
  int set = fcntl(fd, 1036 /* F_SET_RW_HINT */, &hint);
  r = fcntl(fd, 1035 /* F_GET_RW_HINT */, &got);
  printf("rw hint %d %d %llu\n", set, r, (unsigned long long)got);
  // A command the kernel does not have: EINVAL, as natively.
  r = fcntl(fd, 1100);
  printf("fcntl 1100 %d %s\n", r, r < 0 ? strerror(errno) : "");
  struct termios tio;
  r = ioctl(fd, TCGETS, &tio);
  printf("tcgets on a file %d %s\n", r, r < 0 ? strerror(errno) : "");
  /* FS_IOC_FIEMAP: the kernel writes the extents after the header (ioctl_fiemap rules) */
  static char block[8192];
  memset(block, 'x', sizeof block);
  if (pwrite(fd, block, sizeof block, 0) == (ssize_t)sizeof block && fsync(fd) == 0) {
    static union {
      struct fiemap h;
      char room[sizeof(struct fiemap) + 8 * sizeof(struct fiemap_extent)];
    } fm;
    fm.h.fm_length = FIEMAP_MAX_OFFSET;
    fm.h.fm_flags = FIEMAP_FLAG_SYNC;
    fm.h.fm_extent_count = 8;
    r = ioctl(fd, FS_IOC_FIEMAP, &fm);
    if (r == 0 && fm.h.fm_mapped_extents > 0)
      printf("fiemap %u extents, the first at %llu for %llu bytes, physical %llu\n",
             fm.h.fm_mapped_extents, (unsigned long long)fm.h.fm_extents[0].fe_logical,
             (unsigned long long)fm.h.fm_extents[0].fe_length,
             (unsigned long long)fm.h.fm_extents[0].fe_physical);
    else
      printf("fiemap %d %s\n", r, r < 0 ? strerror(errno) : "no extents");
  }
  close(fd2);
  close(fd);

  const char* b = in_dir(dir, 2, "sub/b");
  printf("rename %d\n", rename(a, b));
  printf("link %d\n", link(b, a));
  const char* s = in_dir(dir, 3, "sub/s");
  printf("symlink %d\n", symlink("b", s));
  n = readlink(s, buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = 0;
  printf("readlink %zd %s\n", n, buf);
  printf("chmod %d\n", chmod(b, 0644));
  printf("truncate %d\n", truncate(b, 3));
  struct stat st;
  r = stat(b, &st);
  printf("stat %d size %lld nlink %lu\n", r, (long long)st.st_size, (unsigned long)st.st_nlink);
  ssize_t x = getxattr(b, "user.none", buf, sizeof buf);
  printf("getxattr %zd %s\n", x, x < 0 ? strerror(errno) : "");
  printf("listxattr %zd\n", listxattr(b, buf, sizeof buf));
  printf("unlink %d %d %d\n", unlink(s), unlink(a), unlink(b));
  printf("rmdir %d\n", rmdir(sub));
  mode_t old = umask(027);
  printf("umask %o %o\n", old, umask(old));

  int p[2];
  if (pipe(p) == 0) {
    printf("pipe write %zd\n", write(p[1], "12345", 5));
    int avail = 0;
    r = ioctl(p[0], FIONREAD, &avail);
    printf("fionread %d avail %d\n", r, avail);
    close(p[0]);
    close(p[1]);
  }

  struct utsname u;
  r = uname(&u);
  printf("uname %d %s\n", r, u.sysname);
  struct rlimit rl;
  printf("getrlimit %d\n", getrlimit(RLIMIT_NOFILE, &rl));
  r = prlimit(0, RLIMIT_NOFILE, NULL, &rl);
  printf("prlimit %d cur %llu\n", r, (unsigned long long)rl.rlim_cur);
  struct statfs fs;
  r = statfs(dir, &fs);
  printf("statfs %d blocks %d\n", r, fs.f_blocks > 0);
  struct rusage ru;
  r = getrusage(RUSAGE_SELF, &ru);
  printf("getrusage %d maxrss %ld minflt %ld\n", r, ru.ru_maxrss, ru.ru_minflt);
  struct sysinfo si;
  r = sysinfo(&si);
  printf("sysinfo %d uptime %ld\n", r, si.uptime);
  unsigned char rnd[8];
  n = getrandom(rnd, sizeof rnd, 0);
  printf("getrandom %zd", n);
  for (int i = 0; i < 8; ++i) printf(" %02x", rnd[i]);
  printf("\n");
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  printf("clock %lld.%09ld pid %d\n", (long long)ts.tv_sec, ts.tv_nsec, getpid());
  return 0;
}
