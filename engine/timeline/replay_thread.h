// The thread that runs every replay of a timeline, and its hand-off with the caller's thread.
// ptrace ties tracees to the thread that attached them, so one thread does all replay work;
// the caller hands it jobs and operations and waits. Internal to engine/timeline.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "engine/arch/registers.h"
#include "engine/timeline/timeline_types.h"

namespace rwd {

/// What the replay thread does next, as an operation, a stop handler or serve() decides it:
/// go on with the current replay (Resume), abandon it and start a new one for the run now
/// set (Replay), or end because the timeline is being destroyed (Shutdown). Every handler
/// that can pause returns one and its caller passes on anything but Resume at once.
enum class [[nodiscard]] Next : uint8_t{Resume, Replay, Shutdown};

/// The replay thread and the rendezvous between it and one caller thread. The caller side
/// (start, call, operate, current, shut_down) blocks until the replay thread answers; the
/// replay-thread side (serve, fail) reports stops and runs the caller's jobs while stopped.
class ReplayThread {
 public:
  ReplayThread() = default;
  ReplayThread(const ReplayThread&) = delete;
  ReplayThread& operator=(const ReplayThread&) = delete;

  /// Runs `main` on a new thread and waits for its first stop (serve) or failure (fail).
  /// Throws Error with the failure's message.
  void start(std::function<void()> main);
  /// Makes serve throw Shutdown on the replay thread and joins it (`main` must return then).
  void shut_down();
  /// Runs `fn` on the replay thread while it is stopped; returns when done, rethrowing what
  /// it threw. Throws Error once the replay has failed.
  void call(std::function<void()> fn);
  /// Runs `fn` on the caller's own thread while the replay thread is paused, holding the
  /// rendezvous so that it stays paused; for reads that need no ptrace request (tracee memory
  /// through process_vm_readv, /proc files), which then cost no hand-off: two thread
  /// switches each, most of a Python query's time. Throws Error once the replay has failed.
  void while_paused(const std::function<void()>& fn);
  /// Starts operation `op` on the replay thread and waits for the stop it ends at. `op`
  /// returns Resume to go on with the current replay, Replay to start a new one. An `op`
  /// that throws leaves the replay where it was and is rethrown by the next call's wait.
  /// Throws Error once the replay has failed.
  StopInfo operate(std::function<Next()> op);
  /// The stop last reported.
  StopInfo current();
  /// Caller: the registers of recorded task `rec_tid` that the replay thread kept at its
  /// last pause (keep_registers), while it is still paused there with no job or operation
  /// handed to it since; nullopt otherwise (ask the replay thread with call). A stop's
  /// registers then cost no hand-off: a query reads them at every hit.
  std::optional<Registers> kept_registers(pid_t rec_tid);
  /// Replay thread, before serve: `r` are task `rec_tid`'s registers as inspection reports
  /// them at this stop. Forgotten when the caller hands over the next job or operation
  /// (either may change them).
  void keep_registers(pid_t rec_tid, const Registers& r);

  /// Replay thread: reports `si` as the stop, then runs the caller's jobs until one starts
  /// an operation, and returns. After each operation, `immediate` may give the stop it ended
  /// at without replaying (a diversion ran): that stop is reported at once, and serving goes
  /// on. Returns the operation's Next (Resume or Replay), or Shutdown when the timeline is
  /// being destroyed.
  Next serve(const StopInfo& si, const std::function<std::optional<StopInfo>()>& immediate);
  /// Replay thread: the replay failed with `message`; every waiting and later caller gets
  /// Error(message).
  void fail(const std::string& message);

 private:
  /// Waits, `lock` held on mu_ (released while waiting), until `ready()` holds; `seq` is the
  /// other side's count of answers, which it raises after each change of the state below.
  template <class Ready>
  static void await(std::atomic<uint32_t>& seq, std::unique_lock<std::mutex>& lock, Ready ready);
  /// Tells the replay thread, or the caller, that the state changed (mu_ not held): a futex
  /// wake-up with no mutex hand-over behind it, one thread switch a hand-off.
  void tell_replay();
  void tell_caller();

  std::thread thread_;
  std::mutex mu_;  ///< guards the state below; never held while waiting
  std::atomic<uint32_t> to_replay_{0}, to_caller_{0};
  std::function<void()> job_;  ///< a call()'s job
  std::function<Next()> op_;   ///< an operate()'s operation
  bool job_done_ = false, stopped_ = false, failed_ = false, shutdown_ = false;
  std::exception_ptr job_error_;
  std::string error_;
  StopInfo stop_;
  std::optional<std::pair<pid_t, Registers>> kept_;  ///< keep_registers' task and registers
};

}  // namespace rwd
