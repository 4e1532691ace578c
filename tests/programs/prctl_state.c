// Process settings a program reads back (prctl(2)) and a seccomp filter of its own: under
// rewind it must see what it sees natively (programs.sh prctl_state compares the two).
// rewind traps rdtsc with PR_TSC_SIGSEGV; the program still reads PR_TSC_ENABLE, then the
// mode it set itself. Its filter makes getppid fail with errno 77, recorded and replayed; a
// second one, installed with seccomp(2), makes getpgrp raise SIGSYS, whose handler reports
// the syscall it stopped; a third asks for a tracer's stop at getsid and mkdirat, which fail
// with ENOSYS as no tracer asks for seccomp stops. Arguments are ignored.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

static volatile int sigsys_nr = -1;

static void on_sigsys(int sig, siginfo_t* info, void* ctx) {
  (void)sig, (void)ctx;
  sigsys_nr = info->si_syscall;
}

static int tsc_mode(void) {
  int mode = -1;
  prctl(PR_GET_TSC, &mode, 0, 0, 0);
  return mode;
}

int main(void) {
  printf("tsc mode %d\n", tsc_mode());
  unsigned long long t1 = __rdtsc(), t2 = __rdtsc();
  printf("rdtsc advances: %d\n", t2 >= t1);
  int r = prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
  printf("set sigsegv %d, mode %d\n", r, tsc_mode());
  r = prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
  printf("set enable %d, mode %d\n", r, tsc_mode());
  errno = 0;
  r = prctl(PR_SET_TSC, 7, 0, 0, 0);
  printf("set invalid %d errno %d\n", r, errno);
  printf("dumpable %d\n", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 77),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  printf("seccomp filter %d\n", prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog));
  errno = 0;
  long parent = syscall(SYS_getppid);
  printf("getppid %ld errno %d\n", parent, errno);

  // seccomp(2) itself: what the kernel can do, and a filter that traps getpgrp.
  unsigned int action = SECCOMP_RET_TRAP;
  printf("trap available %ld\n", syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action));
  struct seccomp_notif_sizes sizes = {0};
  long r2 = syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes);
  printf("notif sizes %ld: %u %u %u\n", r2, sizes.seccomp_notif, sizes.seccomp_notif_resp,
         sizes.seccomp_data);
  struct sigaction sa = {.sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO};
  sigaction(SIGSYS, &sa, NULL);
  struct sock_filter trap[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpgrp, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog trap_prog = {sizeof trap / sizeof trap[0], trap};
  printf("seccomp(2) filter %ld\n", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &trap_prog));
  long pgrp = syscall(SYS_getpgrp);
  printf("getpgrp %ld, SIGSYS for syscall %d\n", pgrp, sigsys_nr);

  // A filter that asks for a tracer's stop (SECCOMP_RET_TRACE) at getsid, which rewind
  // traces, and at mkdirat, which its preload library buffers: with no tracer asking for
  // seccomp stops, both fail with ENOSYS, unrun (seccomp(2)).
  struct sock_filter trace[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getsid, 1, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdirat, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | 9),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog trace_prog = {sizeof trace / sizeof trace[0], trace};
  printf("trace filter %ld\n", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &trace_prog));
  for (int i = 0; i < 3; ++i) {
    errno = 0;
    long sid = syscall(SYS_getsid, 0);
    printf("getsid %ld errno %d\n", sid, errno);
  }
  errno = 0;
  long made = syscall(SYS_mkdirat, AT_FDCWD, "/nonexistent-dir/x", 0700);
  printf("mkdirat %ld errno %d\n", made, errno);
  printf("prctl_state done\n");
  return 0;
}
