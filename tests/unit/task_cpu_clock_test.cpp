// TaskCpuClock (engine/record/task_cpu_clock.h) on real child processes: its signal comes
// after the slice's CPU time of the watched thread, and never for a thread that only sleeps,
// however long it sleeps.
#include "engine/record/task_cpu_clock.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>

namespace {

/// A child that spins (or sleeps) until killed; returned once it does (its start-up, page
/// faults included, is over).
pid_t start_child(bool spin) {
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t p = fork();
  if (p == 0) {
    sigset_t slice;  // the test process blocks it (WatchedChild); a watched thread need not
    sigemptyset(&slice);
    sigaddset(&slice, rwd::kSliceSignal);
    sigprocmask(SIG_UNBLOCK, &slice, nullptr);
    (void)!write(ready[1], "r", 1);
    volatile unsigned long n = 0;
    while (spin) n = n + 1;
    for (;;) pause();
  }
  char c;
  REQUIRE(read(ready[0], &c, 1) == 1);
  close(ready[0]);
  close(ready[1]);
  usleep(20'000);  // into pause(), for the sleeper
  return p;
}

void end_child(pid_t p) {
  kill(p, SIGKILL);
  waitpid(p, nullptr, 0);
}

/// Waits at most `ms` milliseconds for kSliceSignal (blocked by the caller); true if it came.
bool slice_signal_within(long ms) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, rwd::kSliceSignal);
  timespec limit{ms / 1000, (ms % 1000) * 1'000'000};
  return sigtimedwait(&set, nullptr, &limit) == rwd::kSliceSignal;
}

struct BlockedSliceSignal {
  sigset_t old;
  BlockedSliceSignal() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, rwd::kSliceSignal);
    sigprocmask(SIG_BLOCK, &set, &old);
  }
  ~BlockedSliceSignal() {
    // A late signal of the clocks closed by now must not end the test process.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, rwd::kSliceSignal);
    timespec none{0, 0};
    while (sigtimedwait(&set, nullptr, &none) > 0) {
    }
    sigprocmask(SIG_SETMASK, &old, nullptr);
  }
};

/// A child (spinning or sleeping) with a clock on it, the slice signal blocked meanwhile.
struct WatchedChild {
  BlockedSliceSignal blocked;
  pid_t pid;
  rwd::TaskCpuClock clock;
  explicit WatchedChild(bool spin) : pid(start_child(spin)) { REQUIRE(clock.open(pid)); }
  ~WatchedChild() { end_child(pid); }
};

}  // namespace

TEST_CASE("a task's CPU-time slice signals the recorder once the task has run that long",
          "[record][chaos]") {
  WatchedChild spinner(true);
  rwd::TaskCpuClock& clock = spinner.clock;
  REQUIRE(clock.start(2'000'000, false));  // 2 ms of its CPU time, signalling us
  CHECK(slice_signal_within(5000));
  CHECK(clock.elapsed_ns() >= 2'000'000);
  // A new slice counts from zero again.
  REQUIRE(clock.start(50'000'000, false));
  CHECK(clock.elapsed_ns() < 50'000'000);
  rwd::TaskCpuClock moved = std::move(clock);
  CHECK(moved.is_open());
  CHECK_FALSE(clock.is_open());
}

TEST_CASE("a slice sent to the thread stops it for its tracer, and is told from others' signals",
          "[record][chaos]") {
  WatchedChild spinner(true);
  REQUIRE(ptrace(PTRACE_SEIZE, spinner.pid, nullptr, nullptr) == 0);
  REQUIRE(spinner.clock.start(2'000'000, true));
  int status = 0;
  REQUIRE(waitpid(spinner.pid, &status, 0) == spinner.pid);
  // A signal-delivery stop of the watched thread itself, with the counter's siginfo.
  REQUIRE(WIFSTOPPED(status));
  CHECK(WSTOPSIG(status) == rwd::kSliceSignal);
  rwd::SigInfo si{};
  REQUIRE(ptrace(PTRACE_GETSIGINFO, spinner.pid, nullptr, si.data()) == 0);
  CHECK(spinner.clock.is_slice_signal(WSTOPSIG(status), si));
  CHECK_FALSE(slice_signal_within(0));  // not sent to this process
  // The same signal number sent by a program (kill: SI_USER) is not the counter's.
  rwd::SigInfo from_kill{};
  siginfo_t k{};
  k.si_signo = rwd::kSliceSignal;
  k.si_code = SI_USER;
  std::memcpy(from_kill.data(), &k, sizeof k);
  CHECK_FALSE(spinner.clock.is_slice_signal(rwd::kSliceSignal, from_kill));
  // Back to this process for the next slice (a thread that blocks the signal). The counter
  // keeps its period, so like the recorder the next slice starts while the thread is stopped:
  // resumed first, a busy test machine could let it spin 2 ms more and stop it again for us.
  REQUIRE(spinner.clock.start(2'000'000, false));
  REQUIRE(ptrace(PTRACE_CONT, spinner.pid, nullptr, nullptr) == 0);  // the signal dropped
  CHECK(slice_signal_within(5000));
}

TEST_CASE("a sleeping task's slice does not run out: slices are CPU time, not wall time",
          "[record][chaos]") {
  WatchedChild sleeper(false);
  // 1 ms of CPU time; it sleeps for the 300 ms we wait.
  REQUIRE(sleeper.clock.start(1'000'000, false));
  CHECK_FALSE(slice_signal_within(300));
  CHECK(sleeper.clock.elapsed_ns() < 1'000'000);
}

TEST_CASE("a clock of no thread is refused, not opened", "[record][chaos]") {
  rwd::TaskCpuClock clock;
  CHECK_FALSE(clock.open(999'999'999));
  CHECK_FALSE(clock.is_open());
  CHECK_FALSE(clock.start(1000, true));
  CHECK(clock.elapsed_ns() == 0);
}
