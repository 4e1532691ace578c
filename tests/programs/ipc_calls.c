// Syscalls of message queues, System V IPC, sockets (sendmmsg, recvmmsg), time adjustment,
// inotify, pidfds, process memory (process_vm_writev into a child) and pipes, each printing what it
// got, for programs.sh (ipc_calls): recorded and replayed twice, the output must be the same each
// time. io_uring_setup and userfaultfd report ENOSYS under rewind (as under rr); natively they may
// work. Arguments are ignored.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void mqueue(void) {
  char name[64];
  snprintf(name, sizeof name, "/rewind-ipc-%d", getpid());
  struct mq_attr attr = {.mq_maxmsg = 4, .mq_msgsize = 64};
  mqd_t q = mq_open(name, O_CREAT | O_RDWR, 0600, &attr);
  if (q == (mqd_t)-1) {
    printf("mq_open failed: %s\n", strerror(errno));
    return;
  }
  mq_send(q, "first", 5, 3);
  mq_send(q, "second", 6, 7);
  struct mq_attr now;
  mq_getattr(q, &now);
  char buf[64];
  unsigned prio = 0;
  ssize_t n = mq_receive(q, buf, sizeof buf, &prio);
  printf("mq: %ld queued, got %.*s (priority %u)\n", now.mq_curmsgs, (int)n, buf, prio);
  mq_close(q);
  printf("mq_unlink %d\n", mq_unlink(name));
}

struct message {
  long type;
  char text[32];
};

static void sysv_messages(void) {
  int q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
  struct message m = {.type = 5};
  strcpy(m.text, "hello queue");
  msgsnd(q, &m, strlen(m.text) + 1, 0);
  struct msqid_ds ds;
  msgctl(q, IPC_STAT, &ds);
  struct message got = {0};
  ssize_t n = msgrcv(q, &got, sizeof got.text, 0, 0);
  printf("msg: %lu queued, got %ld bytes of type %ld: %s\n", (unsigned long)ds.msg_qnum, (long)n,
         got.type, got.text);
  printf("msgctl IPC_RMID %d\n", msgctl(q, IPC_RMID, NULL));
}

static void sysv_semaphores(void) {
  int s = semget(IPC_PRIVATE, 3, IPC_CREAT | 0600);
  semctl(s, 1, SETVAL, 4);
  struct sembuf ops[2] = {{.sem_num = 0, .sem_op = 2}, {.sem_num = 1, .sem_op = -1}};
  semop(s, ops, 2);
  struct timespec t = {0, 1000};
  struct sembuf more = {.sem_num = 2, .sem_op = 9};
  semtimedop(s, &more, 1, &t);
  unsigned short vals[3];
  semctl(s, 0, GETALL, vals);
  struct semid_ds ds;
  semctl(s, 0, IPC_STAT, &ds);
  printf("sem: %lu semaphores, values %u %u %u\n", (unsigned long)ds.sem_nsems, vals[0], vals[1],
         vals[2]);
  printf("semctl IPC_RMID %d\n", semctl(s, 0, IPC_RMID));
}

static void socket_batches(void) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0) return;
  char a[] = "one", b[] = "two!";
  struct iovec out[2] = {{a, 3}, {b, 4}};
  struct mmsghdr send[2] = {{.msg_hdr = {.msg_iov = &out[0], .msg_iovlen = 1}},
                            {.msg_hdr = {.msg_iov = &out[1], .msg_iovlen = 1}}};
  int sent = sendmmsg(sv[0], send, 2, 0);
  char x[8] = {0}, y[8] = {0};
  struct iovec in[2] = {{x, sizeof x}, {y, sizeof y}};
  struct mmsghdr recv[2] = {{.msg_hdr = {.msg_iov = &in[0], .msg_iovlen = 1}},
                            {.msg_hdr = {.msg_iov = &in[1], .msg_iovlen = 1}}};
  int got = recvmmsg(sv[1], recv, 2, 0, NULL);
  printf("mmsg: sent %d, received %d: %s (%u) %s (%u)\n", sent, got, x, recv[0].msg_len, y,
         recv[1].msg_len);
  close(sv[0]);
  close(sv[1]);
}

static void clocks(void) {
  struct timex tx = {.modes = 0};  // read only
  int state = (int)syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx);
  printf("clock_adjtime: state %d, tick %ld, offset %ld\n", state, tx.tick, tx.offset);
  struct timex tx2 = {.modes = 0};
  int state2 = adjtimex(&tx2);
  printf("adjtimex: state %d, status %d, freq %ld\n", state2, tx2.status, tx2.freq);
}

static void inotify(void) {
  char dir[] = "/tmp/rewind-inotify.XXXXXX";
  if (!mkdtemp(dir)) return;
  int fd = (int)syscall(SYS_inotify_init);
  int wd = inotify_add_watch(fd, dir, IN_CREATE);
  char path[64];
  snprintf(path, sizeof path, "%s/new-file", dir);
  close(open(path, O_CREAT | O_WRONLY, 0600));
  char buf[4096] __attribute__((aligned(8)));
  ssize_t n = read(fd, buf, sizeof buf);
  struct inotify_event* e = (struct inotify_event*)buf;
  printf("inotify: watch %d, %ld bytes, created %s\n", wd, (long)n, n > 0 ? e->name : "?");
  unlink(path);
  rmdir(dir);
  close(fd);
}

static void process_memory(void) {
  static char secret[] = "copied across";
  char local[32] = {0};
  struct iovec to = {local, sizeof secret}, from = {secret, sizeof secret};
  ssize_t n = syscall(SYS_process_vm_readv, getpid(), &to, 1, &from, 1, 0);
  printf("process_vm_readv %ld: %s\n", (long)n, local);
  int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  int copy = (int)syscall(SYS_pidfd_getfd, pidfd, 1, 0);
  printf("pidfd_getfd: %s\n", copy >= 0 ? "a new descriptor" : strerror(errno));
  int p[2];
  if (pipe(p) != 0) return;
  char text[] = "spliced";
  struct iovec in = {text, sizeof text};
  ssize_t w = vmsplice(p[1], &in, 1, 0);
  char back[16] = {0};
  ssize_t r = read(p[0], back, sizeof back);
  printf("vmsplice %ld, read %ld: %s\n", (long)w, (long)r, back);
}

/// process_vm_writev into a child process: the child waits on a pipe, then reads what the
/// parent wrote into its memory and exits with a status that says whether it got it.
static void write_child_memory(void) {
  static char mailbox[32] = "empty";
  int go[2];
  if (pipe(go) != 0) return;
  pid_t child = fork();
  if (child == 0) {
    char c;
    if (read(go[0], &c, 1) != 1) _exit(2);
    _exit(strcmp(mailbox, "written by the parent") == 0 ? 0 : 1);
  }
  static char text[] = "written by the parent";
  struct iovec from = {text, sizeof text}, to = {mailbox, sizeof text};
  ssize_t n = syscall(SYS_process_vm_writev, child, &from, 1, &to, 1, 0);
  int status = 0;
  if (write(go[1], "x", 1) != 1 || waitpid(child, &status, 0) != child) return;
  printf("process_vm_writev %ld, the child %s\n", (long)n,
         WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "read it" : "did not read it");
  close(go[0]);
  close(go[1]);
}

/// Memory residency and policy, membarrier, scheduling and process comparison calls: what
/// the kernel writes back is recorded (mincore's page vector, get_mempolicy's mode).
static void memory_and_scheduling(void) {
  char* p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  p[0] = p[4096] = 1;  // two pages of four in memory
  unsigned char vec[4] = {9, 9, 9, 9};
  long r = syscall(SYS_mincore, p, 4 * 4096, vec);
  printf("mincore %ld: %d%d%d%d\n", r, vec[0] & 1, vec[1] & 1, vec[2] & 1, vec[3] & 1);
  printf("mlock2 %ld\n", syscall(SYS_mlock2, p, 4096, 0));
  munmap(p, 4 * 4096);
  long cmds = syscall(SYS_membarrier, 0 /* MEMBARRIER_CMD_QUERY */, 0, 0);
  printf("membarrier query: %s\n", cmds > 0 ? "some commands" : strerror(errno));
  struct timespec slice = {-1, -1};
  r = syscall(SYS_sched_rr_get_interval, 0, &slice);
  printf("sched_rr_get_interval %ld: %s\n", r, slice.tv_sec >= 0 ? "a slice" : "none");
  printf("kcmp same vm %ld\n", syscall(SYS_kcmp, getpid(), getpid(), 1 /* KCMP_VM */, 0, 0));
  int mode = -1;
  unsigned long nodes[2] = {0};
  r = syscall(SYS_get_mempolicy, &mode, nodes, 128, NULL, 0);
  printf("get_mempolicy %ld: mode %d\n", r, mode);
  r = syscall(SYS_landlock_create_ruleset, NULL, 0, 1 /* LANDLOCK_CREATE_RULESET_VERSION */);
  printf("landlock: %s\n", r > 0 ? "a version" : strerror(errno));
  // Newer than this build's headers (Linux 6.6, 6.5, 6.10): what the kernel says, ENOSYS on
  // older kernels, recorded as it said.
  r = syscall(452 /* fchmodat2 */, AT_FDCWD, "/no/such/rewind/file", 0600,
              0x100 /* AT_SYMLINK_NOFOLLOW */);
  printf("fchmodat2: %s\n", r == 0 ? "done" : strerror(errno));
  unsigned long long cstat[5] = {0};
  struct {
    unsigned long long off, len;
  } range = {0, 4096};
  r = syscall(451 /* cachestat */, 0, &range, cstat, 0);
  printf("cachestat: %s\n", r == 0 ? "counted" : strerror(errno));
  r = syscall(462 /* mseal */, 0, 0, 0);
  printf("mseal of nothing: %s\n", r == 0 ? "done" : strerror(errno));
}

static void unavailable(void) {
  struct io_uring_params params;
  memset(&params, 0, sizeof params);
  long ring = syscall(SYS_io_uring_setup, 4, &params);
  int e1 = errno;
  long uffd = syscall(SYS_userfaultfd, 0);
  int e2 = errno;
  printf("io_uring_setup %s\n", ring >= 0 ? "worked" : strerror(e1));
  printf("userfaultfd %s\n", uffd >= 0 ? "worked" : strerror(e2));
  char ldt[16];
  printf("modify_ldt read %ld\n", syscall(SYS_modify_ldt, 0, ldt, sizeof ldt));
}

int main(void) {
  mqueue();
  sysv_messages();
  sysv_semaphores();
  socket_batches();
  clocks();
  inotify();
  process_memory();
  write_child_memory();
  memory_and_scheduling();
  unavailable();
  printf("ipc_calls done\n");
  return 0;
}
