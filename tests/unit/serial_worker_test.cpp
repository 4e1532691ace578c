#include "engine/trace/serial_worker.h"

#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/errors.h"
#include "engine/trace/chunk_stream.h"
#include "test_dir.h"

using namespace rwd;

TEST_CASE("the serial worker runs jobs in submission order, one at a time") {
  SerialWorker w(1 << 20);
  std::vector<int> order;  // written by the worker only; read after drain()
  std::atomic<int> running = 0, most_at_once = 0;
  for (int i = 0; i < 200; ++i)
    w.submit(16, [&, i] {
      int now = ++running;
      if (now > most_at_once) most_at_once = now;
      order.push_back(i);
      --running;
    });
  w.drain();
  REQUIRE(order.size() == 200);
  for (int i = 0; i < 200; ++i) CHECK(order[size_t(i)] == i);
  CHECK(most_at_once == 1);
}

TEST_CASE("submit waits while the queued jobs hold more than the limit") {
  SerialWorker w(100);
  std::atomic<bool> release = false;
  std::atomic<int> done = 0;
  w.submit(80, [&] {
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++done;
  });
  // The first job is running (or queued): 80 bytes held, under the limit, so this one queues.
  w.submit(80, [&] { ++done; });
  // 160 bytes held now: a third submit must wait until the worker has finished a job.
  std::atomic<bool> third_queued = false;
  std::thread producer([&] {
    w.submit(10, [&] { ++done; });
    third_queued = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(third_queued);
  release = true;
  producer.join();
  w.drain();
  CHECK(done == 3);
}

TEST_CASE("a failed job's exception reaches the producer, and later jobs are dropped") {
  SerialWorker w(1 << 20);
  std::atomic<int> ran_after = 0;
  w.submit(1, [] { throw Error("disk full (test)"); });
  CHECK_THROWS_WITH(w.drain(), "disk full (test)");
  CHECK_THROWS_WITH(w.submit(1, [&] { ++ran_after; }), "disk full (test)");
  CHECK_THROWS_WITH(w.drain(), "disk full (test)");
  CHECK(ran_after == 0);
}

TEST_CASE("the worker thread blocks every signal") {
  SerialWorker w(1 << 20);
  sigset_t seen;
  sigemptyset(&seen);
  w.submit(1, [&] { pthread_sigmask(SIG_BLOCK, nullptr, &seen); });
  w.drain();
  CHECK(sigismember(&seen, SIGALRM) == 1);
  CHECK(sigismember(&seen, SIGCHLD) == 1);
  CHECK(sigismember(&seen, SIGINT) == 1);
  // The caller's own mask is left as it was.
  sigset_t mine;
  pthread_sigmask(SIG_BLOCK, nullptr, &mine);
  CHECK(sigismember(&mine, SIGALRM) == 0);
}

TEST_CASE("chunk writers sharing a worker write every chunk, in order, by finish()") {
  TestDir d;
  SerialWorker w(64 << 10);  // small: the producer waits for the worker now and then
  std::vector<std::vector<uint8_t>> a_chunks, b_chunks;
  {
    ChunkWriter a(d / "a", fourcc("TEST"), &w), b(d / "b", fourcc("TEST"), &w);
    for (int i = 0; i < 40; ++i) {
      std::vector<uint8_t> ra(size_t(1000 + 97 * i)), rb(size_t(30 + i));
      for (size_t k = 0; k < ra.size(); ++k) ra[k] = uint8_t(i * 31 + k * 7);
      for (size_t k = 0; k < rb.size(); ++k) rb[k] = uint8_t(i + k);
      a.append(ra);
      b.append(rb);
      a.flush();
      b.flush();
      a_chunks.push_back(ra);
      b_chunks.push_back(rb);
    }
    a.finish();
    b.finish();
    CHECK(a.file_size() == std::filesystem::file_size(d / "a"));
    CHECK(b.file_size() == std::filesystem::file_size(d / "b"));
  }
  for (auto& [name, expected] : {std::pair{"a", &a_chunks}, std::pair{"b", &b_chunks}}) {
    ChunkReader r(d / name, fourcc("TEST"), false);
    for (auto& want : *expected) {
      auto got = r.next();
      REQUIRE(got);
      CHECK(*got == want);
    }
    CHECK_FALSE(r.next());
  }
}

TEST_CASE("a chunk writer's destructor writes what the worker still holds") {
  TestDir d;
  SerialWorker w(1 << 20);
  {
    ChunkWriter a(d / "a", fourcc("TEST"), &w);
    a.append(std::vector<uint8_t>(5000, 9));
    a.flush();
    a.append(std::vector<uint8_t>(300, 4));  // pending, flushed by the destructor
  }
  ChunkReader r(d / "a", fourcc("TEST"), false);
  auto first = r.next(), second = r.next();
  REQUIRE(first);
  REQUIRE(second);
  CHECK(*first == std::vector<uint8_t>(5000, 9));
  CHECK(*second == std::vector<uint8_t>(300, 4));
  CHECK_FALSE(r.next());
}
