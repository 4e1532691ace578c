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

using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC, the timer's clock

int64_t ns_of(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

/// What the wait in progress on this thread wants, for the timer's handler. The tracer
/// writes the fields, then sets `waiting`; the handler runs on the same thread and reads
/// them only while `waiting` holds.
struct WaitState {
  std::atomic<bool> waiting{false};
  pid_t tid = 0;
  const std::atomic<bool>* flag = nullptr;
  int64_t at_ns = INT64_MAX;  ///< CLOCK_MONOTONIC
  int64_t first_look_ns = 0;  ///< no interrupt before this (the wait's first look)
  int64_t poll_ns = 0;
  std::atomic<bool> interrupted{false};  ///< PTRACE_INTERRUPT sent during this wait
  /// Whether the timer is armed, and when it expires (CLOCK_MONOTONIC ns).
  std::atomic<bool> armed{false};
  std::atomic<int64_t> expiry_ns{0};
  timer_t timer{};
  bool ok = false;  ///< the timer was created
};

constinit thread_local WaitState state;  // constant-initialised: safe to touch in the handler

/// The timer's signal: a real-time one that nothing else in rewind uses.
int wake_signal() {
  return SIGRTMIN + 4;
}

/// Arms this thread's timer to expire once at `when_ns` (CLOCK_MONOTONIC). Async-signal-safe
/// (timer_settime is, signal-safety(7)).
void arm_at(int64_t when_ns) {
  itimerspec its{};
  its.it_value.tv_sec = when_ns / 1000000000;
  its.it_value.tv_nsec = when_ns % 1000000000;
  state.expiry_ns = when_ns;
  state.armed = timer_settime(state.timer, TIMER_ABSTIME, &its, nullptr) == 0;
}

/// The timer's handler: a look at the wait in progress. When the interrupt is wanted and
/// the wait has lasted to its first look, it sends PTRACE_INTERRUPT (unless a stop is
/// already there to be reaped: waitid with WNOWAIT leaves it for the wait); else it arms
/// the timer for the next look, when `at` comes or a poll later. Outside a wait the timer
/// stays unarmed until the next wait arms it. Installed with SA_RESTART: the tracer's
/// waitpid, and whatever else the thread was in, goes on.
void on_wake(int) {
  const int saved = errno;
  state.armed = false;
  if (state.waiting && !state.interrupted) {
    const int64_t now = ns_of(Clock::now());
    const bool due = (state.flag && state.flag->load()) || now >= state.at_ns;
    if (now >= state.first_look_ns && due) {
      siginfo_t si{};
      bool stopped = waitid(P_PID, id_t(state.tid), &si,
                            WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) == 0 &&
                     si.si_pid != 0;
      if (!stopped) {
        if (ptrace(PTRACE_INTERRUPT, state.tid, nullptr, nullptr) == 0)
          state.interrupted = true;
        else
          arm_at(now + state.poll_ns);
      }
    } else if (now < state.first_look_ns) {
      arm_at(state.first_look_ns);
    } else {
      arm_at(std::min(now + state.poll_ns, state.at_ns > now ? state.at_ns : INT64_MAX));
    }
  }
  errno = saved;
}

/// Creates the calling thread's timer on first use (SIGEV_THREAD_ID: its signal goes to
/// this thread only, not to the DAP or gdb server's threads) and deletes it when the
/// thread ends.
struct WakeTimer {
  WakeTimer() {
    static std::once_flag installed;
    std::call_once(installed, [] {
      struct sigaction sa {};
      sa.sa_handler = on_wake;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
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
    state.ok = timer_create(CLOCK_MONOTONIC, &ev, &state.timer) == 0;
  }
  ~WakeTimer() {
    if (state.ok) timer_delete(state.timer);
    state.ok = false;
  }
  WakeTimer(const WakeTimer&) = delete;
  WakeTimer& operator=(const WakeTimer&) = delete;
};

/// The wait's first look (CLOCK_MONOTONIC ns), as it has always fallen: when `at` does (a
/// checkpoint or trampoline due then) if that is at least `first_min_us` away, the looks
/// being a poll apart; else a poll from now. One already due waits for the first poll: a
/// task that stops on its own every few microseconds (a watchpoint hit in a loop) would
/// otherwise often be interrupted just as it stops (wait_stop then reports its own stop,
/// which it holds pending, and the interrupt is lost for that run). `poll_ns`: the looks'
/// interval, as the handler re-arms them (at least 1 ms).
int64_t first_look(const InterruptWhen& wanted, int64_t poll_ns, int64_t now) {
  if (wanted.at != Clock::time_point::max()) {
    const int64_t left = ns_of(wanted.at) - now;
    if (left >= int64_t(wanted.first_min_us) * 1000)
      return now + std::max((left - 1) % poll_ns + 1, int64_t(wanted.first_min_us) * 1000);
  }
  return now + poll_ns;
}

}  // namespace

int wait_interruptible(pid_t tid, const InterruptWhen& wanted, bool& sent) {
  if (!wanted.any() || sent) return wait_task(tid);
  thread_local WakeTimer timer;
  const int64_t now = ns_of(Clock::now());
  state.tid = tid;
  state.flag = wanted.flag;
  state.at_ns = wanted.at == Clock::time_point::max() ? INT64_MAX : ns_of(wanted.at);
  state.poll_ns = std::max<int64_t>(int64_t(wanted.poll_ms) * 1000000, 1000000);
  state.first_look_ns = first_look(wanted, state.poll_ns, now);
  state.interrupted = false;
  state.waiting = true;
  // The timer stays armed from wait to wait: arming it costs a syscall (on a VM, an exit to
  // the hypervisor too), and most waits of a replay last microseconds. It is armed here only
  // when it would look too late for this wait, or not at all.
  if (state.ok && (!state.armed || state.expiry_ns > state.first_look_ns))
    arm_at(state.first_look_ns);
  forget_registers();  // whatever stop comes, the task ran to it
  int status = 0;
  pid_t r;
  while ((r = waitpid(tid, &status, __WALL)) < 0 && errno == EINTR) {
  }
  const int e = errno;
  state.waiting = false;
  if (state.interrupted) sent = true;
  if (r < 0) {
    errno = e;
    throw_errno("waitpid(" + std::to_string(tid) + ")");
  }
  settle_step(tid, status);
  return status;
}

}  // namespace rwd
