/* For the syscall buffering test: the scatter/gather calls librewind_preload.so buffers
 * (readv, preadv, pwritev, recvmsg, sendmsg), in the shapes that matter:
 * - a file written with pwritev and read back with readv and preadv over uneven iovecs (one
 *   of them empty), past the end of the file too;
 * - datagrams sent with sendmsg and received with recvmsg: one cut short (MSG_TRUNC in
 *   msg_flags), one with the sender's address (msg_name, msg_namelen), one with a control
 *   buffer (a descriptor passed with SCM_RIGHTS: that call stays traced);
 * - a reader thread's readv on an empty pipe and recvmsg on an empty socket, which wait until
 *   the main thread writes (buffered with the desched counter, made traced when they wait).
 * Prints what each part saw; the same lines in every run and every replay.
 * Usage: vector_io DIR (where it writes its file). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

static int pipe_fds[2], sock_fds[2];

/* FNV-1a over n bytes, to print what a buffer holds. */
static unsigned sum(const void* p, size_t n) {
  unsigned h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ ((const unsigned char*)p)[i]) * 16777619u;
  return h;
}

static void files(const char* dir) {
  char path[600], a[64], b[200], c[300];
  snprintf(path, sizeof path, "%s/vector_io.dat", dir);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  for (size_t i = 0; i < sizeof a; ++i) a[i] = (char)('a' + i % 26);
  for (size_t i = 0; i < sizeof b; ++i) b[i] = (char)(i * 7);
  for (size_t i = 0; i < sizeof c; ++i) c[i] = (char)(i ^ 0x5a);
  struct iovec out[3] = {{a, sizeof a}, {b, sizeof b}, {c, sizeof c}};
  printf("pwritev %zd\n", pwritev(fd, out, 3, 10));
  char x[5], y[1], z[400];
  memset(z, 0, sizeof z);
  struct iovec in[3] = {{x, sizeof x}, {y, 0}, {z, sizeof z}};
  lseek(fd, 0, SEEK_SET);
  ssize_t n = readv(fd, in, 3);  // 405 of the 574 bytes
  printf("readv %zd: %08x %08x\n", n, sum(x, sizeof x), sum(z, sizeof z));
  memset(z, 0, sizeof z);
  n = readv(fd, in, 3);  // the 169 left, then the end of the file
  printf("readv %zd: %08x; again %zd\n", n, sum(z, sizeof z), readv(fd, in, 3));
  char p[100], q[100];
  struct iovec pin[2] = {{p, sizeof p}, {q, sizeof q}};
  n = preadv(fd, pin, 2, 70);
  printf("preadv %zd: %08x %08x\n", n, sum(p, sizeof p), sum(q, sizeof q));
  printf("preadv past the end %zd\n", preadv(fd, pin, 2, 10000));
  close(fd);
  unlink(path);
}

static void datagrams(void) {
  int s[2];
  socketpair(AF_UNIX, SOCK_DGRAM, 0, s);
  char part1[] = "scatter ", part2[] = "and gather over a datagram socket";
  struct iovec out[2] = {{part1, strlen(part1)}, {part2, strlen(part2)}};
  struct msghdr m = {.msg_iov = out, .msg_iovlen = 2};
  printf("sendmsg %zd\n", sendmsg(s[0], &m, 0));
  char r1[10], r2[12];
  struct iovec in[2] = {{r1, sizeof r1}, {r2, sizeof r2}};
  struct msghdr rm = {.msg_iov = in, .msg_iovlen = 2, .msg_flags = 0x1234};
  ssize_t n = recvmsg(s[1], &rm, 0);
  printf("recvmsg %zd: '%.10s' '%.12s' truncated %d controllen %zu\n", n, r1, r2,
         !!(rm.msg_flags & MSG_TRUNC), (size_t)rm.msg_controllen);
  close(s[0]);
  close(s[1]);

  // Named sockets: the receiver learns the sender's address.
  int rx = socket(AF_UNIX, SOCK_DGRAM, 0), tx = socket(AF_UNIX, SOCK_DGRAM, 0);
  struct sockaddr_un ra = {.sun_family = AF_UNIX}, ta = {.sun_family = AF_UNIX};
  snprintf(ra.sun_path + 1, sizeof ra.sun_path - 1, "rewind-vector-rx-%d", getpid());
  snprintf(ta.sun_path + 1, sizeof ta.sun_path - 1, "rewind-vector-tx-%d", getpid());
  socklen_t rlen = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(ra.sun_path + 1);
  socklen_t tlen = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(ta.sun_path + 1);
  bind(rx, (struct sockaddr*)&ra, rlen);
  bind(tx, (struct sockaddr*)&ta, tlen);
  struct msghdr sm = {.msg_name = &ra, .msg_namelen = rlen, .msg_iov = out, .msg_iovlen = 1};
  printf("sendmsg to a name %zd\n", sendmsg(tx, &sm, 0));
  struct sockaddr_un from;
  memset(&from, 0, sizeof from);
  char buf[64] = {0};
  struct iovec one = {buf, sizeof buf};
  struct msghdr nm = {
      .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &one, .msg_iovlen = 1};
  n = recvmsg(rx, &nm, 0);
  printf("recvmsg %zd from the sender %d (namelen matches %d): '%s'\n", n,
         memcmp(&from, &ta, tlen) == 0, nm.msg_namelen == tlen, buf);

  // A descriptor passed along: control data, traced.
  int pass[2];
  socketpair(AF_UNIX, SOCK_DGRAM, 0, pass);
  union {
    char bytes[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } ctl;
  memset(&ctl, 0, sizeof ctl);
  struct msghdr cm = {.msg_iov = out,
                      .msg_iovlen = 1,
                      .msg_control = ctl.bytes,
                      .msg_controllen = sizeof ctl.bytes};
  struct cmsghdr* h = CMSG_FIRSTHDR(&cm);
  h->cmsg_level = SOL_SOCKET;
  h->cmsg_type = SCM_RIGHTS;
  h->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(h), &pipe_fds[0], sizeof(int));
  printf("sendmsg with a descriptor %zd\n", sendmsg(pass[0], &cm, 0));
  memset(&ctl, 0, sizeof ctl);
  memset(buf, 0, sizeof buf);
  struct msghdr cr = {.msg_iov = &one,
                      .msg_iovlen = 1,
                      .msg_control = ctl.bytes,
                      .msg_controllen = sizeof ctl.bytes};
  n = recvmsg(pass[1], &cr, 0);
  h = CMSG_FIRSTHDR(&cr);
  printf("recvmsg with a descriptor %zd: '%s' rights %d\n", n, buf,
         h && h->cmsg_type == SCM_RIGHTS);
  close(pass[0]);
  close(pass[1]);
  close(rx);
  close(tx);
}

/* Waits on an empty pipe with readv and on an empty socket with recvmsg, 20 times each. */
static void* reader(void* arg) {
  (void)arg;
  unsigned total = 0;
  for (int i = 0; i < 20; ++i) {
    int head, tail[3];
    struct iovec in[2] = {{&head, sizeof head}, {tail, sizeof tail}};
    if (readv(pipe_fds[0], in, 2) != 16) return (void*)1;
    struct iovec rin = {tail, sizeof tail};
    struct msghdr m = {.msg_iov = &rin, .msg_iovlen = 1};
    if (recvmsg(sock_fds[1], &m, 0) != 12) return (void*)2;
    total += (unsigned)head + (unsigned)tail[2];
  }
  printf("reader saw %u\n", total);
  return 0;
}

static long spin(long n) {
  volatile long x = 0;
  for (long i = 0; i < n; ++i) x += i;
  return x;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  pipe(pipe_fds);
  socketpair(AF_UNIX, SOCK_DGRAM, 0, sock_fds);
  files(argv[1]);
  datagrams();
  pthread_t t;
  pthread_create(&t, NULL, reader, NULL);
  for (int i = 0; i < 20; ++i) {
    spin(200000);
    int msg[4] = {i, 0, 0, i * 3};
    struct iovec out[2] = {{msg, 8}, {msg + 2, 8}};
    writev(pipe_fds[1], out, 2);
    struct msghdr m = {.msg_iov = out + 1, .msg_iovlen = 1};
    out[1].iov_base = msg + 1;
    out[1].iov_len = 12;
    sendmsg(sock_fds[0], &m, 0);
  }
  void* r;
  pthread_join(t, &r);
  printf("reader returned %ld\n", (long)r);
  return 0;
}
