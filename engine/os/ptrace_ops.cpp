#include "ptrace_ops.h"

#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/errors.h"

namespace rwd {

Registers get_regs(pid_t tid) {
  Registers r;
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &r) != 0)
    throw_errno("ptrace(GETREGS, " + std::to_string(tid) + ")");
  return r;
}

bool try_get_regs(pid_t tid, Registers& out) {
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &out) == 0) return true;
  if (errno == ESRCH) return false;
  throw_errno("ptrace(GETREGS, " + std::to_string(tid) + ")");
}

void set_regs(pid_t tid, const Registers& r) {
  if (ptrace(PTRACE_SETREGS, tid, nullptr, &r) != 0)
    throw_errno("ptrace(SETREGS, " + std::to_string(tid) + ")");
}

bool try_set_regs(pid_t tid, const Registers& r) {
  if (ptrace(PTRACE_SETREGS, tid, nullptr, &r) == 0) return true;
  if (errno == ESRCH) return false;
  throw_errno("ptrace(SETREGS, " + std::to_string(tid) + ")");
}

std::array<uint8_t, 128> get_siginfo(pid_t tid) {
  std::array<uint8_t, 128> si{};
  if (ptrace(PTRACE_GETSIGINFO, tid, nullptr, si.data()) != 0)
    throw_errno("ptrace(GETSIGINFO, " + std::to_string(tid) + ")");
  return si;
}

void set_siginfo(pid_t tid, const std::array<uint8_t, 128>& si) {
  if (ptrace(PTRACE_SETSIGINFO, tid, nullptr, si.data()) != 0)
    throw_errno("ptrace(SETSIGINFO, " + std::to_string(tid) + ")");
}

bool try_get_sigmask(pid_t tid, uint64_t& out) {
  if (ptrace(PTRACE_GETSIGMASK, tid, reinterpret_cast<void*>(sizeof out), &out) == 0) return true;
  if (errno == ESRCH) return false;
  throw_errno("ptrace(GETSIGMASK, " + std::to_string(tid) + ")");
}

bool try_set_sigmask(pid_t tid, uint64_t mask) {
  if (ptrace(PTRACE_SETSIGMASK, tid, reinterpret_cast<void*>(sizeof mask), &mask) == 0) return true;
  if (errno == ESRCH) return false;
  throw_errno("ptrace(SETSIGMASK, " + std::to_string(tid) + ")");
}

unsigned long get_event_msg(pid_t tid) {
  unsigned long msg = 0;
  if (ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &msg) != 0)
    throw_errno("ptrace(GETEVENTMSG, " + std::to_string(tid) + ")");
  return msg;
}

int syscall_stop_kind(pid_t tid) {
  struct __ptrace_syscall_info info;
  std::memset(&info, 0, sizeof info);
  if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof info, &info) <= 0)
    throw_errno("ptrace(GET_SYSCALL_INFO, " + std::to_string(tid) + ")");
  return info.op;
}

int wait_task(pid_t tid) {
  int status = 0;
  while (waitpid(tid, &status, __WALL) < 0)
    if (errno != EINTR) throw_errno("waitpid(" + std::to_string(tid) + ")");
  return status;
}

int wait_for_end(pid_t tid) {
  int status = 0;
  while (waitpid(tid, &status, __WALL) == tid && WIFSTOPPED(status))
    ptrace(PTRACE_CONT, tid, nullptr, nullptr);
  return status;
}

bool resume(pid_t tid, int request, int sig) {
  if (ptrace(__ptrace_request(request), tid, nullptr, reinterpret_cast<void*>(long(sig))) == 0)
    return true;
  if (errno == ESRCH) return false;
  throw_errno("ptrace(resume " + std::to_string(request) + ", " + std::to_string(tid) + ")");
}

pid_t spawn_traced(const char* path, char* const argv[], char* const envp[], void (*child_setup)(),
                   bool (*after_seize)()) {
  pid_t pid = fork();
  if (pid < 0) throw_errno("fork");
  if (pid == 0) {
    personality(ADDR_NO_RANDOMIZE);
    prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
    if (child_setup) child_setup();
    kill(getpid(), SIGSTOP);
    if (after_seize && !after_seize()) _exit(126);
    execve(path, argv, envp);
    _exit(127);  // unreachable when traced: the recorder checks the execve result
  }
  int st = 0;
  if (waitpid(pid, &st, WSTOPPED) != pid || !WIFSTOPPED(st)) throw_errno("waitpid(child)");
  if (ptrace(PTRACE_SEIZE, pid, nullptr, reinterpret_cast<void*>(kTraceOptions)) != 0) {
    int e = errno;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    throw SystemError("ptrace(SEIZE) (is ptrace allowed here? see /proc/sys/kernel/yama)", e);
  }
  kill(pid, SIGCONT);
  // Run the child's own code (the end of kill(), then execve) until the execve entry.
  for (;;) {
    if (!resume(pid, PTRACE_SYSCALL)) throw Error("child vanished before exec");
    if (waitpid(pid, &st, __WALL) != pid) throw_errno("waitpid(child)");
    if (!WIFSTOPPED(st))
      throw Error(WIFEXITED(st) && WEXITSTATUS(st) == 126 && after_seize
                      ? "the kernel refused rewind's seccomp filter (try --no-syscall-buffer)"
                      : "child exited before exec");
    if (WSTOPSIG(st) == (SIGTRAP | 0x80) && syscall_stop_kind(pid) == PTRACE_SYSCALL_INFO_ENTRY &&
        get_regs(pid).orig_rax == 59)
      return pid;
    // Our own SIGSTOP/SIGCONT stops and the syscalls of kill() are not part of the recording.
  }
}

}  // namespace rwd
