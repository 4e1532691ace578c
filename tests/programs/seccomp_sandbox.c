// A sandbox's seccomp filter (seccomp(2)) in a threaded program: it must judge the program's
// calls exactly as natively, and none of the preload library's own (programs.sh
// seccomp_sandbox compares the output with a native run's). The filter, installed by the
// main thread without TSYNC:
//   - traps ioctl and fcntl (SIGSYS; the handler answers for the call, and checks that
//     si_call_addr is the address it returns to, as the kernel makes it);
//   - traps geteuid, whose handler makes it return 42;
//   - fails pipe with ESRCH and getppid with EPERM;
//   - kills the process at perf_event_open and at syscall numbers 1000-1003 (those the
//     library uses for itself).
// After it a new thread starts (the library opens and arms its desched counter with ioctl and
// fcntl, and registers its buffer with syscall 1000), blocks in a pipe read and reports
// PR_GET_SECCOMP; a thread started before it reports 0, as a filter without TSYNC leaves
// other threads alone; the program's own FIONREAD ioctl on a pipe (a call the library
// buffers) is trapped too.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static volatile int traps, trapped_nr[8], addr_matches = 1;
static int before_pipe[2], after_pipe[2];

static void on_sigsys(int sig, siginfo_t* info, void* p) {
  (void)sig;
  ucontext_t* ctx = p;
  if ((long long)(uintptr_t)info->si_call_addr != ctx->uc_mcontext.gregs[REG_RIP]) addr_matches = 0;
  if (traps < 8) trapped_nr[traps] = info->si_syscall;
  ++traps;
  // The call's result, as the sandbox's broker would give it.
  long long result = info->si_syscall == SYS_geteuid ? 42 : -EACCES;
  ctx->uc_mcontext.gregs[REG_RAX] = result;
}

static void* before_filter(void* arg) {
  (void)arg;
  char c;
  if (read(before_pipe[0], &c, 1) != 1) return NULL;
  printf("thread started before the filter: PR_GET_SECCOMP %d\n", prctl(PR_GET_SECCOMP));
  return NULL;
}

static void* after_filter(void* arg) {
  (void)arg;
  char c;
  ssize_t n = read(after_pipe[0], &c, 1);  // blocks: the library arms its desched counter
  printf("thread started after the filter: read %zd '%c', PR_GET_SECCOMP %d\n", n, c,
         prctl(PR_GET_SECCOMP));
  return NULL;
}

#define TRAP_NR(nr) \
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP)
#define FAIL_NR(nr, e)                             \
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (e))

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  printf("PR_GET_SECCOMP before %d, no_new_privs %d\n", prctl(PR_GET_SECCOMP),
         prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
  if (pipe(before_pipe) || pipe(after_pipe)) return 1;
  pthread_t before, after;
  pthread_create(&before, NULL, before_filter, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSYS, &sa, NULL);
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      TRAP_NR(SYS_ioctl),
      TRAP_NR(SYS_fcntl),
      TRAP_NR(SYS_geteuid),
      FAIL_NR(SYS_pipe, ESRCH),
      FAIL_NR(SYS_getppid, EPERM),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 1000, 0, 2),
      BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 1003, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
  printf("no_new_privs %d\n", prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
  printf("filter %ld\n", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog));
  printf("PR_GET_SECCOMP after %d\n", prctl(PR_GET_SECCOMP));
  pthread_create(&after, NULL, after_filter, NULL);
  usleep(20000);
  if (write(after_pipe[1], "a", 1) != 1) return 1;
  pthread_join(after, NULL);
  if (write(before_pipe[1], "b", 1) != 1) return 1;
  pthread_join(before, NULL);

  errno = 0;
  long r = fcntl(1, F_GETFL);
  printf("fcntl %ld errno %d\n", r, errno);
  int queued = -1;
  errno = 0;
  r = ioctl(before_pipe[0], FIONREAD, &queued);
  printf("ioctl FIONREAD %ld errno %d queued %d\n", r, errno, queued);
  printf("geteuid %ld\n", syscall(SYS_geteuid));
  int fds[2];
  errno = 0;
  r = syscall(SYS_pipe, fds);
  printf("pipe %ld errno %d\n", r, errno);
  errno = 0;
  r = syscall(SYS_getppid);
  printf("getppid %ld errno %d\n", r, errno);
  printf("%d traps:", traps);
  for (int i = 0; i < traps && i < 8; ++i) printf(" %d", trapped_nr[i]);
  printf("; si_call_addr is the handler's rip: %d\n", addr_matches);
  printf("seccomp_sandbox done\n");
  return 0;
}
