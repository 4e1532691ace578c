// wait_stop (engine/replay/replay_task.h) on a real traced child, when rewind's
// PTRACE_INTERRUPT and the task's own stop come together: the kernel reports the interrupt
// first and holds the task's signal pending (get_signal takes ptrace traps before the signal
// queue). wait_stop must report the task's own stop, not the interrupt: a caller that runs a
// syscall in the task at an Interrupted stop would otherwise meet the signal instead (seen
// as "did not enter mprotect (stop kind 2, signal 5)" where soft watches single-step).
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>

#include "engine/os/proc.h"
#include "engine/replay/replay_task.h"

using namespace rwd;

namespace {

/// A seized child that spins until killed, stopped by a first interrupt.
pid_t seized_spinner() {
  pid_t p = fork();
  if (p == 0) {
    volatile unsigned long n = 0;
    for (;;) n = n + 1;
  }
  REQUIRE(ptrace(PTRACE_SEIZE, p, nullptr, (void*)long(PTRACE_O_TRACESYSGOOD)) == 0);
  REQUIRE(ptrace(PTRACE_INTERRUPT, p, nullptr, nullptr) == 0);
  int status = 0;
  REQUIRE(waitpid(p, &status, __WALL) == p);
  REQUIRE(WIFSTOPPED(status));
  REQUIRE((status >> 16) == PTRACE_EVENT_STOP);
  return p;
}

void end(pid_t p) {
  kill(p, SIGKILL);
  int status = 0;
  waitpid(p, &status, __WALL);
}

}  // namespace

TEST_CASE("an interrupt that comes as the task traps reports the trap", "[unit][replay]") {
  pid_t p = seized_spinner();
  ReplayTask t;
  t.tid = t.pid = t.rec_tid = p;
  std::atomic<bool> pause{true};
  InterruptWhen when;
  when.flag = &pause;

  SECTION("a SIGTRAP pending behind the interrupt's stop is what the wait reports") {
    // The task's trap (as a single step's, queued for the thread) and a second interrupt
    // both pending while it is stopped: at the resume the kernel reports the interrupt.
    REQUIRE(syscall(SYS_tgkill, p, p, SIGTRAP) == 0);
    REQUIRE(ptrace(PTRACE_INTERRUPT, p, nullptr, nullptr) == 0);
    REQUIRE((read_proc_signals(p).pending & (1ull << (SIGTRAP - 1))) != 0);
    t.interrupt_sent = true;
    REQUIRE(ptrace(PTRACE_CONT, p, nullptr, nullptr) == 0);
    Stop s = wait_stop(t, PTRACE_CONT, when);
    CHECK(s.kind == Stop::Signal);
    CHECK(s.sig == SIGTRAP);
    CHECK_FALSE(t.interrupt_sent);
    // Nothing is pending now: a syscall run in the task would find its entry.
    CHECK((read_proc_signals(p).pending & (1ull << (SIGTRAP - 1))) == 0);
  }
  SECTION("an interrupt with nothing pending is reported as Interrupted") {
    REQUIRE(ptrace(PTRACE_INTERRUPT, p, nullptr, nullptr) == 0);
    t.interrupt_sent = true;
    REQUIRE(ptrace(PTRACE_CONT, p, nullptr, nullptr) == 0);
    Stop s = wait_stop(t, PTRACE_CONT, when);
    CHECK(s.kind == Stop::Interrupted);
    CHECK_FALSE(t.interrupt_sent);
  }
  end(p);
}
