// A background thread that runs jobs one at a time, in the order they were submitted. The trace
// writer uses one to compress and write chunks while the recorder goes on with the tracees.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace rwd {

/// Runs submitted jobs on one thread of its own, in submission order. The thread starts with
/// the first job (so a process that never submits one stays single-threaded, and a fork before
/// it copies no worker) and blocks every signal: process-directed signals (the recorder's
/// SIGALRM timer, SIGCHLD) keep going to the thread that waits for them.
///
/// The first job that throws stops the queue: later jobs are dropped, and submit() and drain()
/// rethrow that exception from then on.
class SerialWorker {
 public:
  /// `max_queued_bytes`: submit() waits while the jobs already queued cost more than this (the
  /// cost is what the caller says a job holds in memory, in bytes), which bounds the memory
  /// held by a producer faster than the worker.
  explicit SerialWorker(size_t max_queued_bytes) : max_queued_(max_queued_bytes) {}
  /// Runs the jobs still queued, then stops the thread. Errors are dropped here: call drain()
  /// first to see them.
  ~SerialWorker();
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  /// Queues `job`, holding `cost_bytes` of memory until it has run. Throws the first failed
  /// job's exception, if any; std::system_error if the thread cannot start.
  void submit(size_t cost_bytes, std::function<void()> job);
  /// Waits until every queued job has run. Throws the first failed job's exception, if any.
  void drain();

 private:
  void run();
  void rethrow_failure() const;

  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::pair<size_t, std::function<void()>>> jobs_;
  size_t queued_bytes_ = 0;
  bool busy_ = false;  // a job taken off the queue is running
  bool stop_ = false;
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace rwd
