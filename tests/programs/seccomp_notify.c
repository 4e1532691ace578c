// A supervisor that answers its target's syscalls (seccomp_unotify(2), SECCOMP_RET_USER_NOTIF),
// as container runtimes and sandboxes do. programs.sh seccomp_notify compares the output with
// a native run's, recorded buffered and with every syscall traced, each replayed twice.
//   1. Across processes: a child installs a filter that sends getuid to a supervisor, passes
//      the listener descriptor to its parent with SCM_RIGHTS, and calls getuid twice; the
//      parent answers 7000 and 7001 and checks that each notification names the child.
//   2. Across threads: a thread started before the main thread's filter (so not under it)
//      answers the main thread's getppid (4000, 4001), uname (SECCOMP_USER_NOTIF_FLAG_CONTINUE:
//      the kernel runs it, and it writes the buffer), getpgid (EPERM), and a read of a pipe
//      (CONTINUE; the supervisor writes the bytes only after its answer, so the read waits).
//      Then a getppid that a signal interrupts while it waits: the supervisor sends SIGUSR1
//      (SA_RESTART) to the main thread after receiving the notification, finds its id no
//      longer valid (ENOENT) once the handler ran, and answers the restarted call's new one.
// With the arguments `exec PROGRAM`, only the first case, the child executing PROGRAM with
// the argument `getuid` after its filter is in place (PROGRAM then prints its getuid's answer).
// The supervisor checks each notification with SECCOMP_IOCTL_NOTIF_ID_VALID; any error of its
// ioctls fails the program, so a notification that rewind interrupts shows.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

static int data_pipe[2], fd_pipe[2];
static pid_t main_tid;
static volatile sig_atomic_t handled;
static int stale_enoent;

static void on_usr1(int sig) {
  (void)sig;
  handled = 1;
}

/// Installs a filter that sends the calls numbered `nrs` (`n` of them; a read only of
/// data_pipe's read end) to a supervisor; returns the listener descriptor.
static int install(const int* nrs, int n) {
  struct sock_filter code[16];
  int k = 0;
  code[k++] =
      (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  for (int i = 0; i < n; ++i)  // each jumps to the USER_NOTIF at the end
    code[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nrs[i],
                                             (unsigned char)(n - i + 3), 0);
  // read: only of the data pipe
  code[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_read, 0, 2);
  code[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                           offsetof(struct seccomp_data, args[0]));
  code[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)data_pipe[0], 1, 0);
  code[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  code[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
  struct sock_fprog prog = {(unsigned short)k, code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
  return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
                      &prog);
}

/// Receives one notification on `fd` into `req`; exits the program on any error.
static void receive(int fd, struct seccomp_notif* req) {
  memset(req, 0, sizeof *req);
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) {
    printf("SECCOMP_IOCTL_NOTIF_RECV failed: %s\n", strerror(errno));
    exit(1);
  }
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) != 0) {
    printf("SECCOMP_IOCTL_NOTIF_ID_VALID failed: %s\n", strerror(errno));
    exit(1);
  }
}

/// Sends `resp`'s answer; exits the program on any error.
static void answer(int fd, struct seccomp_notif_resp* resp) {
  if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp) != 0) {
    printf("SECCOMP_IOCTL_NOTIF_SEND failed: %s\n", strerror(errno));
    exit(1);
  }
}

static void across_processes(const char* exec_program) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) exit(1);
  pid_t child = fork();
  if (child == 0) {
    const int nrs[] = {SYS_getuid};
    int fd = install(nrs, 1);
    char byte = 'f';
    char control[CMSG_SPACE(sizeof fd)];
    memset(control, 0, sizeof control);
    struct iovec iov = {&byte, 1};
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof fd);
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    if (fd < 0 || sendmsg(sv[1], &msg, 0) != 1) _exit(2);
    if (exec_program) {
      close(fd);
      execl(exec_program, exec_program, "getuid", (char*)NULL);
      _exit(4);
    }
    long a = syscall(SYS_getuid), b = syscall(SYS_getuid);
    _exit(a == 7000 && b == 7001 ? 0 : 3);
  }
  char byte;
  char control[CMSG_SPACE(sizeof(int))];
  struct iovec iov = {&byte, 1};
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
  if (recvmsg(sv[0], &msg, 0) != 1 || !CMSG_FIRSTHDR(&msg)) exit(1);
  int fd;
  memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&msg)), sizeof fd);
  int named = 0, calls = exec_program ? 1 : 2;
  for (int i = 0; i < calls; ++i) {
    struct seccomp_notif req;
    receive(fd, &req);
    named += req.pid == (__u32)child && req.data.nr == SYS_getuid;
    struct seccomp_notif_resp resp = {.id = req.id, .val = 7000 + i};
    answer(fd, &resp);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("processes: child's getuid answered %d times, %d named the child; it exited %d\n", calls,
         named, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static void* supervisor(void* arg) {
  (void)arg;
  int fd;
  if (read(fd_pipe[0], &fd, sizeof fd) != sizeof fd) exit(1);
  for (int i = 0; i < 5; ++i) {
    struct seccomp_notif req;
    receive(fd, &req);
    struct seccomp_notif_resp resp = {.id = req.id};
    if (req.data.nr == SYS_getppid)
      resp.val = 4000 + i;
    else if (req.data.nr == SYS_getpgid)
      resp.error = -EPERM;
    else
      resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;  // uname, read
    answer(fd, &resp);
    if (req.data.nr == SYS_read) {
      usleep(20000);  // the read waits for these bytes
      if (write(data_pipe[1], "hi", 2) != 2) exit(1);
    }
  }
  struct seccomp_notif req;
  receive(fd, &req);
  syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
  for (int i = 0; i < 5000 && !handled; ++i) usleep(1000);
  stale_enoent = ioctl(fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) != 0 && errno == ENOENT;
  receive(fd, &req);  // the restarted call's
  struct seccomp_notif_resp resp = {.id = req.id, .val = 4242};
  answer(fd, &resp);
  return NULL;
}

static void across_threads(void) {
  pthread_t t;
  main_tid = (pid_t)syscall(SYS_gettid);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  if (pipe(data_pipe) != 0 || pipe(fd_pipe) != 0) exit(1);
  pthread_create(&t, NULL, supervisor, NULL);
  const int nrs[] = {SYS_getppid, SYS_uname, SYS_getpgid};
  int fd = install(nrs, 3);
  if (fd < 0) {
    printf("seccomp: %s\n", strerror(errno));
    exit(1);
  }
  if (write(fd_pipe[1], &fd, sizeof fd) != sizeof fd) exit(1);
  long a = syscall(SYS_getppid), b = getppid();
  struct utsname u;
  memset(&u, 0, sizeof u);
  int un = uname(&u);
  errno = 0;
  long g = getpgid(0);
  int g_errno = errno;
  char buf[8] = {0};
  ssize_t n = read(data_pipe[0], buf, sizeof buf);
  long c = syscall(SYS_getppid);
  pthread_join(t, NULL);
  printf("threads: getppid %ld %ld; uname %d %s; getpgid %ld %s; read %zd '%s'\n", a, b, un,
         u.sysname, g, strerror(g_errno), n, buf);
  printf("interrupted getppid: handler ran %d, old id stale (ENOENT) %d, restarted call %ld\n",
         (int)handled, stale_enoent, c);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc == 2 && strcmp(argv[1], "getuid") == 0) {
    printf("executed: getuid %ld\n", syscall(SYS_getuid));
    return 0;
  }
  if (argc == 3 && strcmp(argv[1], "exec") == 0) {
    across_processes(argv[2]);
    return 0;
  }
  across_processes(NULL);
  across_threads();
  printf("seccomp_notify done\n");
  return 0;
}
