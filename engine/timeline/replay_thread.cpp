// The replay thread's hand-off (replay_thread.h). The two sides wait on a counter each
// (std::atomic::wait, a futex) rather than on a condition variable: a condition variable
// notified under its mutex wakes the waiter only to block it on that mutex, a second futex
// round trip per hand-off, and a query hands off thousands of times.
#include "engine/timeline/replay_thread.h"

#include <utility>

#include "engine/errors.h"

namespace rwd {

template <class Ready>
void ReplayThread::await(std::atomic<uint32_t>& seq, std::unique_lock<std::mutex>& lock,
                         Ready ready) {
  while (!ready()) {
    // Read under the lock: the other side changes the state under it and counts after, so
    // a change made after this check moves `seq` past `seen` and ends the wait.
    uint32_t seen = seq.load(std::memory_order_acquire);
    lock.unlock();
    seq.wait(seen, std::memory_order_acquire);
    lock.lock();
  }
}

void ReplayThread::tell_replay() {
  to_replay_.fetch_add(1, std::memory_order_release);
  to_replay_.notify_all();
}

void ReplayThread::tell_caller() {
  to_caller_.fetch_add(1, std::memory_order_release);
  to_caller_.notify_all();
}

void ReplayThread::start(std::function<void()> main) {
  thread_ = std::thread(std::move(main));
  std::unique_lock lock(mu_);
  await(to_caller_, lock, [&] { return stopped_ || failed_; });
  if (failed_) {
    lock.unlock();
    thread_.join();
    throw Error(error_);
  }
}

void ReplayThread::shut_down() {
  {
    std::lock_guard lock(mu_);
    shutdown_ = true;
  }
  tell_replay();
  if (thread_.joinable()) thread_.join();
}

void ReplayThread::call(std::function<void()> fn) {
  std::unique_lock lock(mu_);
  if (failed_) throw Error(error_);
  job_ = std::move(fn);
  job_done_ = false;
  kept_.reset();
  lock.unlock();
  tell_replay();
  lock.lock();
  await(to_caller_, lock, [&] { return job_done_ || failed_; });
  if (job_error_) {
    auto e = std::move(job_error_);
    std::rethrow_exception(e);
  }
  if (failed_ && !job_done_) throw Error(error_);
}

void ReplayThread::while_paused(const std::function<void()>& fn) {
  std::lock_guard lock(mu_);
  if (failed_) throw Error(error_);
  // The caller is the only one that hands out jobs and operations, and none of its own is
  // in progress, so the replay thread waits in serve(): its state is as it left it (the lock
  // orders its writes before these reads), and it cannot wake before the lock is released.
  if (!stopped_ || job_ || op_) throw Error("the replay is not paused");
  fn();
}

StopInfo ReplayThread::operate(std::function<Next()> op) {
  std::unique_lock lock(mu_);
  if (failed_) throw Error(error_);
  stopped_ = false;
  op_ = std::move(op);
  kept_.reset();
  job_done_ = false;
  lock.unlock();
  tell_replay();
  lock.lock();
  await(to_caller_, lock, [&] { return stopped_ || failed_; });
  if (failed_) throw Error(error_);
  return stop_;
}

StopInfo ReplayThread::current() {
  std::lock_guard lock(mu_);
  return stop_;
}

std::optional<Registers> ReplayThread::kept_registers(pid_t rec_tid) {
  std::lock_guard lock(mu_);
  if (failed_ || !stopped_ || job_ || op_ || !kept_ || kept_->first != rec_tid) return std::nullopt;
  return kept_->second;
}

void ReplayThread::keep_registers(pid_t rec_tid, const Registers& r) {
  std::lock_guard lock(mu_);
  kept_.emplace(rec_tid, r);
}

Next ReplayThread::serve(const StopInfo& si,
                         const std::function<std::optional<StopInfo>()>& immediate) {
  std::unique_lock lock(mu_);
  stop_ = si;
  stopped_ = true;
  for (;;) {
    // Every pass answers the caller (a stop, a job done) before waiting for the next.
    lock.unlock();
    tell_caller();
    lock.lock();
    await(to_replay_, lock, [&] { return job_ || op_ || shutdown_; });
    if (shutdown_) return Next::Shutdown;
    auto job = std::move(job_);
    auto op = std::move(op_);
    job_ = nullptr;
    op_ = nullptr;
    lock.unlock();
    std::exception_ptr err;
    Next next = Next::Resume;
    try {
      if (op)
        next = op();
      else
        job();
    } catch (...) {
      err = std::current_exception();
    }
    std::optional<StopInfo> now = op && !err ? immediate() : std::nullopt;
    lock.lock();
    job_done_ = true;
    job_error_ = err;
    if (op && err) {
      stopped_ = true;  // the operation failed to start: stay here
      continue;
    }
    if (now) {  // the operation ended without replaying (a diversion)
      stop_ = *now;
      stopped_ = true;
      continue;
    }
    if (op) return next;  // the caller waits for the stop this operation ends at
  }
}

void ReplayThread::fail(const std::string& message) {
  {
    std::lock_guard lock(mu_);
    failed_ = true;
    error_ = message;
  }
  tell_caller();
}

}  // namespace rwd
