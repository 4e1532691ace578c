// The replay thread's hand-off (replay_thread.h).
#include "engine/timeline/replay_thread.h"

#include <utility>

#include "engine/errors.h"

namespace rwd {

void ReplayThread::start(std::function<void()> main) {
  thread_ = std::thread(std::move(main));
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return stopped_ || failed_; });
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
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ReplayThread::call(std::function<void()> fn) {
  std::unique_lock lock(mu_);
  if (failed_) throw Error(error_);
  job_ = std::move(fn);
  job_done_ = false;
  cv_.notify_all();
  cv_.wait(lock, [&] { return job_done_ || failed_; });
  if (job_error_) {
    auto e = std::move(job_error_);
    std::rethrow_exception(e);
  }
  if (failed_ && !job_done_) throw Error(error_);
}

StopInfo ReplayThread::operate(std::function<Next()> op) {
  std::unique_lock lock(mu_);
  if (failed_) throw Error(error_);
  stopped_ = false;
  op_ = std::move(op);
  job_done_ = false;
  cv_.notify_all();
  cv_.wait(lock, [&] { return stopped_ || failed_; });
  if (failed_) throw Error(error_);
  return stop_;
}

StopInfo ReplayThread::current() {
  std::lock_guard lock(mu_);
  return stop_;
}

Next ReplayThread::serve(const StopInfo& si,
                         const std::function<std::optional<StopInfo>()>& immediate) {
  std::unique_lock lock(mu_);
  stop_ = si;
  stopped_ = true;
  cv_.notify_all();
  for (;;) {
    cv_.wait(lock, [&] { return job_ || op_ || shutdown_; });
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
      cv_.notify_all();
      continue;
    }
    if (now) {  // the operation ended without replaying (a diversion)
      stop_ = *now;
      stopped_ = true;
      cv_.notify_all();
      continue;
    }
    cv_.notify_all();
    if (op) return next;
  }
}

void ReplayThread::fail(const std::string& message) {
  std::lock_guard lock(mu_);
  failed_ = true;
  error_ = message;
  cv_.notify_all();
}

}  // namespace rwd
