// A test program started under ptrace by the test itself and stopped at a breakpoint: the
// "live" half of the symbol tests (the other half stops the same program inside a replay).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace test {

/// A child process traced by the calling thread, stopped after its exec.
class LiveProcess {
 public:
  explicit LiveProcess(const std::string& path) {
    pid_ = fork();
    if (pid_ == 0) {
      ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
      personality(ADDR_NO_RANDOMIZE);
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      execl(path.c_str(), path.c_str(), nullptr);
      _exit(127);
    }
    int status = 0;
    waitpid(pid_, &status, 0);
    if (!WIFSTOPPED(status)) throw std::runtime_error("exec of " + path + " failed");
  }
  ~LiveProcess() {
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
  }
  LiveProcess(const LiveProcess&) = delete;
  LiveProcess& operator=(const LiveProcess&) = delete;

  pid_t pid() const { return pid_; }

  user_regs_struct regs() const {
    user_regs_struct r{};
    ptrace(PTRACE_GETREGS, pid_, nullptr, &r);
    return r;
  }

  /// Runs until the breakpoint at `addr` is hit with `rdi == arg` (the first argument).
  /// Returns false when the program exits first.
  bool run_to(uint64_t addr, uint64_t arg) {
    for (;;) {
      long orig = ptrace(PTRACE_PEEKTEXT, pid_, addr, nullptr);
      ptrace(PTRACE_POKETEXT, pid_, addr, (orig & ~0xffL) | 0xcc);
      ptrace(PTRACE_CONT, pid_, nullptr, nullptr);
      int status = 0;
      waitpid(pid_, &status, 0);
      ptrace(PTRACE_POKETEXT, pid_, addr, orig);
      if (!WIFSTOPPED(status)) return false;
      user_regs_struct r = regs();
      if (r.rip != addr + 1) return false;  // some other stop: a crash
      r.rip = addr;
      ptrace(PTRACE_SETREGS, pid_, nullptr, &r);
      if ((r.rdi & 0xffffffff) == arg) return true;
      ptrace(PTRACE_SINGLESTEP, pid_, nullptr, nullptr);  // past the breakpoint
      waitpid(pid_, &status, 0);
    }
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace test
