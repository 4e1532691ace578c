#include "serial_worker.h"

#include <signal.h>

namespace rwd {

SerialWorker::~SerialWorker() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SerialWorker::rethrow_failure() const {
  if (failure_) std::rethrow_exception(failure_);
}

void SerialWorker::submit(size_t cost_bytes, std::function<void()> job) {
  std::unique_lock lock(mu_);
  rethrow_failure();
  if (!thread_.joinable()) {
    // The new thread inherits the signal mask in force when it is created (pthread_create(3)).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    try {
      thread_ = std::thread([this] { run(); });
    } catch (...) {
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
      throw;
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  changed_.wait(lock, [&] { return jobs_.empty() || queued_bytes_ < max_queued_ || failure_; });
  rethrow_failure();
  jobs_.emplace_back(cost_bytes, std::move(job));
  queued_bytes_ += cost_bytes;
  changed_.notify_all();
}

void SerialWorker::drain() {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return (jobs_.empty() && !busy_) || failure_; });
  rethrow_failure();
}

void SerialWorker::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    changed_.wait(lock, [&] { return !jobs_.empty() || stop_; });
    if (jobs_.empty()) return;  // stopping, and nothing left to run
    auto [cost, job] = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    lock.unlock();
    std::exception_ptr failed;
    try {
      job();
    } catch (...) {
      failed = std::current_exception();
    }
    job = nullptr;  // free what the job held before saying it is done
    lock.lock();
    busy_ = false;
    queued_bytes_ -= cost;
    if (failed && !failure_) failure_ = failed;
    if (failure_) {
      for (auto& j : jobs_) queued_bytes_ -= j.first;
      jobs_.clear();
    }
    changed_.notify_all();
  }
}

}  // namespace rwd
