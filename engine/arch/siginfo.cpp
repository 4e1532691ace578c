#include "siginfo.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace rwd {

namespace {
constexpr size_t kCodeOffset = 8;  // after si_signo, si_errno
constexpr size_t kPidOffset = 16;  // _sifields._kill.si_pid
constexpr size_t kFdOffset = 24;   // _sifields._sigpoll.si_fd, after si_band
}  // namespace

int siginfo_fd(const SigInfo& si) {
  int fd;
  std::memcpy(&fd, si.data() + kFdOffset, sizeof fd);
  return fd;
}

int siginfo_code(const SigInfo& si) {
  int code;
  std::memcpy(&code, si.data() + kCodeOffset, sizeof code);
  return code;
}

bool is_synchronous_fault(int sig, const SigInfo& si) {
  return siginfo_code(si) > 0 &&
         (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP);
}

bool is_timer_expiry(int sig, const SigInfo& si) {
  if (sig >= SIGRTMIN) return false;
  int code = siginfo_code(si);
  return code == SI_TIMER ||
         (code == SI_KERNEL && (sig == SIGALRM || sig == SIGVTALRM || sig == SIGPROF));
}

bool sent_by_this_process(const SigInfo& si) {
  pid_t pid;
  std::memcpy(&pid, si.data() + kPidOffset, sizeof pid);
  // Inside a PID namespace below rewind's, a sender outside it shows as pid 0
  // (pid_namespaces(7)); a sender inside it always has a number there.
  return siginfo_code(si) == SI_TKILL && (pid == getpid() || pid == 0);
}

SigInfo make_siginfo(int sig, int code, int32_t pid, uint32_t uid, int32_t status) {
  SigInfo si{};
  const int32_t head[3] = {sig, 0, code};
  std::memcpy(si.data(), head, sizeof head);
  std::memcpy(si.data() + 16, &pid, 4);
  std::memcpy(si.data() + 20, &uid, 4);
  std::memcpy(si.data() + 24, &status, 4);
  return si;
}

}  // namespace rwd
