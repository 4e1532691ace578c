#include "interruptible_wait.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>

#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/step_flags.h"

namespace rwd {

namespace {

/// The timer's signal: a real-time one that nothing else in rewind uses. Its handler does
/// nothing; it is installed without SA_RESTART so that the wait returns EINTR.
int wake_signal() {
  return SIGRTMIN + 4;
}

void on_wake(int) {}

/// The calling thread's timer, created on first use (SIGEV_THREAD_ID: its signal goes to
/// this thread only, not to the DAP or gdb server's threads).
class WakeTimer {
 public:
  WakeTimer() {
    static std::once_flag installed;
    std::call_once(installed, [] {
      struct sigaction sa {};
      sa.sa_handler = on_wake;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = 0;  // no SA_RESTART
      if (sigaction(wake_signal(), &sa, nullptr) != 0) throw_errno("sigaction(wake signal)");
    });
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, wake_signal());
    pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
    sigevent ev{};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = wake_signal();
    ev._sigev_un._tid =
        pid_t(syscall(SYS_gettid));  // sigev_notify_thread_id (glibc 2.36 lacks the name)
    ok_ = timer_create(CLOCK_MONOTONIC, &ev, &timer_) == 0;
  }
  ~WakeTimer() {
    if (ok_) timer_delete(timer_);
  }
  WakeTimer(const WakeTimer&) = delete;
  WakeTimer& operator=(const WakeTimer&) = delete;

  /// Starts (every `ms` milliseconds, the first time after `first_ns` nanoseconds; 0: after
  /// `ms`) or stops (ms 0) the timer. False if it could not be made.
  bool set(long ms, long first_ns = 0) {
    if (!ok_) return false;
    itimerspec its{};
    its.it_value.tv_nsec = its.it_interval.tv_nsec = ms * 1000000;
    if (ms && first_ns > 0) its.it_value.tv_nsec = first_ns;
    return timer_settime(timer_, 0, &its, nullptr) == 0;
  }

 private:
  timer_t timer_{};
  bool ok_ = false;
};

}  // namespace

int wait_interruptible(pid_t tid, const InterruptWhen& wanted, bool& sent) {
  if (!wanted.any() || sent) return wait_task(tid);
  int status = 0;
  thread_local WakeTimer timer;
  // Without a timer (timer_create failed) the flag is still checked at every EINTR.
  // The looks fall so that one comes when `at` does (a checkpoint or trampoline due then),
  // when that is 1 ms away or more. One already due waits for the first poll, as before:
  // a task that stops on its own every few microseconds (a watchpoint hit in a loop) would
  // otherwise often be interrupted just as it stops (wait_stop then reports its own stop,
  // which it holds pending, and the interrupt is lost for that run).
  long first_ns = 0;
  if (wanted.at != std::chrono::steady_clock::time_point::max() && wanted.poll_ms > 0) {
    const long min_ns = wanted.first_min_us * 1000;
    long poll_ns = wanted.poll_ms * 1000000;
    long left = std::chrono::duration_cast<std::chrono::nanoseconds>(
                    wanted.at - std::chrono::steady_clock::now())
                    .count();
    if (left >= min_ns) first_ns = std::max((left - 1) % poll_ns + 1, min_ns);
  }
  bool ticking = timer.set(wanted.poll_ms, first_ns);
  forget_registers();  // whatever stop comes, the task ran to it
  for (;;) {
    pid_t r = waitpid(tid, &status, __WALL);
    if (r >= 0) break;
    if (errno != EINTR) {
      int e = errno;
      if (ticking) timer.set(0);
      errno = e;
      throw_errno("waitpid(" + std::to_string(tid) + ")");
    }
    if (sent || !wanted.due()) continue;
    // Still running? Its stop may have just come in.
    r = waitpid(tid, &status, __WALL | WNOHANG);
    if (r > 0) break;
    if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0) sent = true;
  }
  if (ticking) timer.set(0);
  settle_step(tid, status);
  return status;
}

}  // namespace rwd
