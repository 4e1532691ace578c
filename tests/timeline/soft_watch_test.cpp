// A write watch whose page the program writes all the time, over a real recording of
// tests/programs/page_neighbours.c: each pass stores its number beside page.watched with a
// `mov` of every form, so that a watch kept in software (engine/replay/soft_watch_run.h: on a
// machine whose CPU does not give programs its debug registers, or forced by
// REWIND_SOFT_DEBUG_REGISTERS=1 in timeline.soft_debug_registers) faults at each store and
// makes it for the program (plain_store). At every hit, forwards and backwards, the
// neighbours must hold what the CPU would have stored; a store made with a wrong size, value
// or address, or skipped, shows there.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "engine/replay/remote_syscall.h"
#include "engine/replay/replay_task.h"
#include "engine/timeline/timeline.h"
#include "tests/support/nm_symbol.h"
#include "tests/support/recorded_trace.h"

using namespace rwd;

namespace {

constexpr long kPasses = 4096;  // page.watched = 1024, 2048, 3072, 4096

/// The offsets in struct neighbours (page_neighbours.c) of what each pass stores.
constexpr uint64_t kWatched = 0x40, kByte = 0x48, kHigh = 0x49, kImm8 = 0x4a, kWord = 0x4c,
                   kDword = 0x50, kQword = 0x58, kNeg = 0x60, kEnd = 0x68;

template <typename T>
T at(const std::vector<uint8_t>& bytes, uint64_t off) {
  T v{};
  std::memcpy(&v, bytes.data() + off, sizeof v);
  return v;
}

/// Checks that `page` (the struct's bytes up to kEnd) holds what pass `i` stores.
void check_pass(const std::vector<uint8_t>& page, long i) {
  REQUIRE(page.size() == kEnd);
  CHECK(at<uint8_t>(page, kByte) == uint8_t(i));
  CHECK(at<uint8_t>(page, kHigh) == uint8_t(i >> 8));
  CHECK(at<uint8_t>(page, kImm8) == 0x5a);
  CHECK(at<uint16_t>(page, kWord) == uint16_t(i));
  CHECK(at<uint32_t>(page, kDword) == uint32_t(i));
  CHECK(at<long>(page, kQword) == i);
  CHECK(at<long>(page, kNeg) == -5);
}

/// The 8 bytes at `addr` of task `tid` at `tl`'s current point.
long read_long(Timeline& tl, pid_t tid, uint64_t addr) {
  long v = 0;
  std::vector<uint8_t> b = tl.read_memory(tid, addr, sizeof v);
  REQUIRE(b.size() == sizeof v);
  std::memcpy(&v, b.data(), sizeof v);
  return v;
}

}  // namespace

TEST_CASE("a write watch beside stores to its page: hits and the stores' values, both ways") {
  Timeline tl(::test::recorded_trace(REWIND_BIN,
                                     std::string(PAGE_NEIGHBOURS) + " " + std::to_string(kPasses)));
  const pid_t tid = tl.current().tid;
  const uint64_t page = rwd::test::nm_symbol(PAGE_NEIGHBOURS, "page");  // linked -no-pie
  REQUIRE(page != 0);
  auto read = [&] { return tl.read_memory(tid, page, kEnd); };
  REQUIRE(tl.add_watchpoint(page + kWatched, 8, WatchKind::Write));

  // Forwards: each hit just after page.watched = i, with pass i's stores made before it.
  for (long i = 1024; i <= 3072; i += 1024) {
    StopInfo s = tl.resume_forward();
    REQUIRE(s.reason == StopReason::Watchpoint);
    std::vector<uint8_t> now = read();
    CHECK(at<long>(now, kWatched) == i);
    check_pass(now, i);
  }
  // Backwards: on a store to page.watched before it ran, in pass watched + 1024, whose other
  // stores are made.
  StopInfo back = tl.resume_backward();
  REQUIRE(back.reason == StopReason::Watchpoint);
  std::vector<uint8_t> then = read();
  const long before = at<long>(then, kWatched);
  CHECK((before == 1024 || before == 2048));
  check_pass(then, before + 1024);
  // Forwards again from there to the last write, and on to the end.
  long i = before + 1024;
  for (StopInfo s = tl.resume_forward(); s.reason == StopReason::Watchpoint;
       s = tl.resume_forward(), i += 1024) {
    std::vector<uint8_t> now = read();
    CHECK(at<long>(now, kWatched) == i);
    check_pass(now, i);
  }
  CHECK(i == kPasses + 1024);  // every hit up to page.watched = 4096 was seen
  tl.remove_watchpoint(page + kWatched, 8, WatchKind::Write);
}

TEST_CASE("a write watch from the program's start runs the loader, not single steps of it") {
  // Just after the exec the task has run no syscall of the new image: a watch kept in
  // software still makes its page read-only through one (in the vDSO, find_syscall_insn)
  // instead of single-stepping the dynamic loader's twenty thousand instructions to its first.
  Timeline tl(::test::recorded_trace(REWIND_BIN, std::string(PAGE_NEIGHBOURS) + " 1"));
  const uint64_t page = rwd::test::nm_symbol(PAGE_NEIGHBOURS, "page");
  REQUIRE(page != 0);
  REQUIRE(tl.add_watchpoint(page + kWatched, 8, WatchKind::Write));
  const uint64_t stops_before = replay_stops_total();
  StopInfo end = tl.resume_forward();  // one pass: page.watched is never written
  CHECK(end.reason == StopReason::TraceEnd);
  const uint64_t stops = replay_stops_total() - stops_before;
  INFO("ptrace stops of the replay to the end: " << stops << ", events " << tl.event_count());
  CHECK(stops < 20 * tl.event_count() + 100);
  tl.remove_watchpoint(page + kWatched, 8, WatchKind::Write);
}

TEST_CASE("a write watch's own stores are made for the program, without remote mprotects") {
  // tests/programs/dense_stores.c stores counter = 1..20,000 with a plain `mov`. Kept in
  // software, the watch faults at each store; the store is made through /proc/PID/mem and
  // reported as the step after it (soft_watch_run.cpp: store_past_fault), where it used to
  // cost a step between two mprotects run in the task: two syscalls rewind made there for
  // every hit. Each hit must still come just after its store, with its value, both ways.
  Timeline tl(::test::recorded_trace(REWIND_BIN, DENSE_STORES));
  const uint64_t counter = rwd::test::nm_symbol(DENSE_STORES, "counter");  // linked -no-pie
  REQUIRE(counter != 0);
  const pid_t tid = tl.current().tid;
  auto value = [&] { return read_long(tl, tid, counter); };
  REQUIRE(tl.add_watchpoint(counter, 8, WatchKind::Write));
  StopInfo first = tl.resume_forward();  // the guard is set up on the way
  REQUIRE(first.reason == StopReason::Watchpoint);
  REQUIRE(value() == 1);
  constexpr long kHits = 300;
  const uint64_t calls_before = RemoteSyscall::calls_by_trap() + RemoteSyscall::calls_by_stops();
  for (long i = 2; i <= kHits; ++i) {
    StopInfo s = tl.resume_forward();
    REQUIRE(s.reason == StopReason::Watchpoint);
    REQUIRE(s.addr == counter);
    REQUIRE(value() == i);
  }
  const uint64_t calls =
      RemoteSyscall::calls_by_trap() + RemoteSyscall::calls_by_stops() - calls_before;
  INFO("syscalls rewind ran in the task over " << kHits - 1 << " hits: " << calls);
  // Two a hit where each store was stepped with the pages made writable around it; a few
  // where an interval checkpoint was taken on the way.
  CHECK(calls < uint64_t(kHits / 4));
  // Backwards: on a store before it ran (the one just made, or the one before, as in the
  // case above); forwards again, just after that store, with its value.
  StopInfo back = tl.resume_backward();
  REQUIRE(back.reason == StopReason::Watchpoint);
  const long before = value();
  CHECK((before == kHits - 1 || before == kHits - 2));
  StopInfo again = tl.resume_forward();
  REQUIRE(again.reason == StopReason::Watchpoint);
  CHECK(value() == before + 1);
  tl.remove_watchpoint(counter, 8, WatchKind::Write);
}

TEST_CASE("a write watch on a shared page: its stores and its neighbour's, both ways") {
  // tests/programs/shared_stores.c: `watched` = 100, 200, ... 1000 and its neighbour = every
  // pass, on a MAP_SHARED page. /proc/PID/mem does not write a shared page made read-only,
  // so a store there is let through with the page writable again, not made by rewind.
  constexpr uint64_t kWatchedAt = 0x200000000, kNeighbourAt = kWatchedAt + 8;
  Timeline tl(::test::recorded_trace(REWIND_BIN, SHARED_STORES));
  const pid_t tid = tl.current().tid;
  auto at = [&](uint64_t addr) { return read_long(tl, tid, addr); };
  REQUIRE(tl.add_watchpoint(kWatchedAt, 8, WatchKind::Write));
  long hits = 0;
  for (StopInfo s = tl.resume_forward(); s.reason == StopReason::Watchpoint;
       s = tl.resume_forward()) {
    ++hits;
    CHECK(at(kWatchedAt) == 100 * hits);
    CHECK(at(kNeighbourAt) == 100 * hits);  // stored just before, in the same pass
  }
  CHECK(hits == 10);
  StopInfo back = tl.resume_backward();
  REQUIRE(back.reason == StopReason::Watchpoint);
  const long before = at(kWatchedAt);
  CHECK((before == 900 || before == 800));
  CHECK(at(kNeighbourAt) == before + 100);  // on the store of watched = before + 100
  tl.remove_watchpoint(kWatchedAt, 8, WatchKind::Write);
}
