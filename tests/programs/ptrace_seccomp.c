// A tracer that asks for its tracee's seccomp stops (PTRACE_O_TRACESECCOMP), as
// `strace --seccomp-bpf` does, for programs.sh (ptrace_seccomp): the child installs a filter
// that says SECCOMP_RET_TRACE, with its own data, for a few calls, and the parent prints each
// stop it sees: the wait status, PTRACE_GETEVENTMSG's data and PTRACE_GET_SYSCALL_INFO's
// answer. At getuid's stop it follows the call to its exit (PTRACE_SYSCALL) and changes the
// result; the child's exit status says whether it saw that result.
// With the argument `skip`, the tracer also skips getgid at its seccomp stop (orig_rax -1,
// its result in rax), as a sandbox's supervisor does, and asks for the exit's stop
// (PTRACE_O_TRACEEXIT), which comes after exit_group's seccomp stop.
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/ptrace.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "show_call.h"

// Declared by <sys/ptrace.h>, which clashes with <linux/ptrace.h> (needed for
// struct ptrace_syscall_info).
extern long ptrace(int request, ...);

// The filter's data for each call it traces.
enum { kGetppid = 0x51, kGetuid = 0x52, kGetgid = 0x53, kFstat = 0x54, kExitGroup = 0x55 };

#define TRACE_CALL(nr, data)                       \
  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE | (data))

static void child_work(void) {
  if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(10);
  raise(SIGSTOP);
  struct sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      TRACE_CALL(SYS_getppid, kGetppid),
      TRACE_CALL(SYS_getuid, kGetuid),
      TRACE_CALL(SYS_getgid, kGetgid),
      TRACE_CALL(SYS_newfstatat, kFstat),
      TRACE_CALL(SYS_exit_group, kExitGroup),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof code / sizeof code[0], code};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(11);
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) _exit(12);
  long parent = syscall(SYS_getppid);
  long uid = syscall(SYS_getuid);  // its tracer makes it 4242
  long gid = syscall(SYS_getgid);  // skipped with 77 when asked
  int fd = open("/proc/self/exe", O_RDONLY);
  struct stat st;
  int statted = fstat(fd, &st);  // newfstatat through libc: a call the library buffers
  _exit((parent == getppid() ? 1 : 0) | (uid == 4242 ? 2 : 0) | (gid == 77 ? 4 : 0) |
        (statted == 0 && S_ISREG(st.st_mode) ? 8 : 0));
}

static const char* call_name(unsigned data) {
  switch (data) {
    case kGetppid:
      return "getppid";
    case kGetuid:
      return "getuid";
    case kGetgid:
      return "getgid";
    case kFstat:
      return "newfstatat";
    case kExitGroup:
      return "exit_group";
  }
  return "?";
}

int main(int argc, char** argv) {
  setvbuf(stdout, 0, _IOLBF, 0);
  const int skip = argc > 1 && strcmp(argv[1], "skip") == 0;
  pid_t child = fork();
  if (child == 0) child_work();
  int status;
  waitpid(child, &status, 0);
  printf("child stopped by %s\n", WIFSTOPPED(status) ? sigabbrev_np(WSTOPSIG(status)) : "?");
  long options = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD | (skip ? PTRACE_O_TRACEEXIT : 0);
  show("setoptions", ptrace(PTRACE_SETOPTIONS, child, 0, options));
  show("cont, discarding SIGSTOP", ptrace(PTRACE_CONT, child, 0, 0));
  for (int stops = 0; stops < 40; ++stops) {
    if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status)) break;
    struct ptrace_syscall_info info;
    memset(&info, 0, sizeof info);
    long size = ptrace(PTRACE_GET_SYSCALL_INFO, child, sizeof info, &info);
    if ((status >> 16) == PTRACE_EVENT_SECCOMP) {
      unsigned long data = 0;
      ptrace(PTRACE_GETEVENTMSG, child, 0, &data);
      printf("seccomp stop of %s: data %#lx; info op %d, %ld bytes, nr %lld, ret_data %#x\n",
             call_name((unsigned)data), data, info.op, size, (long long)info.seccomp.nr,
             info.seccomp.ret_data);
      if (data == kGetuid) {
        show("follow it to its exit", ptrace(PTRACE_SYSCALL, child, 0, 0));
        continue;
      }
      if (data == kGetgid && skip) {
        struct user_regs_struct regs;
        ptrace(PTRACE_GETREGS, child, 0, &regs);
        regs.orig_rax = -1;
        regs.rax = 77;
        show("skip it, with 77", ptrace(PTRACE_SETREGS, child, 0, &regs));
      }
    } else if (WSTOPSIG(status) == (SIGTRAP | 0x80) && info.op == PTRACE_SYSCALL_INFO_EXIT) {
      printf("exit stop: rval %lld, error %d\n", (long long)info.exit.rval, info.exit.is_error);
      struct user_regs_struct regs;
      ptrace(PTRACE_GETREGS, child, 0, &regs);
      regs.rax = 4242;
      show("result 4242 instead", ptrace(PTRACE_SETREGS, child, 0, &regs));
    } else {
      printf("other stop: %s event %d\n", sigabbrev_np(WSTOPSIG(status) & 0x7f), status >> 16);
    }
    ptrace(PTRACE_CONT, child, 0, 0);
  }
  if (WIFEXITED(status))
    printf("child exited with %d\n", WEXITSTATUS(status));
  else
    printf("child ended by status %#x\n", status);
  return 0;
}
