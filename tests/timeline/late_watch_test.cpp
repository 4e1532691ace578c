// Reverse continues from the end of a recording to the last of a loop's 20,000 stores into a
// watched variable (tests/programs/dense_stores.c, linked -no-pie), with no syscall between
// the loop's start and the print after it. The scan arms the watchpoint only near the end
// of its window (Run::watch_at_ms, engine/timeline/late_watch.cpp), and arms it earlier
// again when no store came after: either way the landing must be the last store, with the
// values the program stored, and the next reverse continue the store before.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "engine/timeline/timeline.h"
#include "tests/support/nm_symbol.h"
#include "tests/support/recorded_trace.h"

using namespace rwd;

namespace {

constexpr long kStores = 20000;

uint64_t symbol(const char* name) {
  uint64_t addr = rwd::test::nm_symbol(DENSE_STORES, name);  // -no-pie: nm's address
  REQUIRE(addr != 0);
  return addr;
}

long as_long(const std::vector<uint8_t>& bytes) {
  long v = 0;
  REQUIRE(bytes.size() == sizeof v);
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

long read_long(Timeline& tl, pid_t tid, uint64_t addr) {
  return as_long(tl.read_memory(tid, addr, sizeof(long)));
}

/// From the end of `trace`'s recording, two reverse continues to `counter`'s stores (stopping
/// after each write), then one that stops before the write (gdb's reverse default).
void back_from_the_end(const std::string& trace) {
  Timeline tl(trace);
  const pid_t tid = tl.current().tid;
  const uint64_t counter = symbol("counter");
  REQUIRE(tl.resume_forward().reason == StopReason::TraceEnd);
  REQUIRE(tl.add_watchpoint(counter, 8, WatchKind::Write));

  StopInfo back = tl.resume_backward(Timeline::WatchStop::AfterWrite);
  REQUIRE(back.reason == StopReason::Watchpoint);
  CHECK(as_long(back.old_value) == kStores - 1);
  CHECK(as_long(back.new_value) == kStores);
  CHECK(read_long(tl, tid, counter) == kStores);

  back = tl.resume_backward(Timeline::WatchStop::AfterWrite);
  REQUIRE(back.reason == StopReason::Watchpoint);
  CHECK(as_long(back.new_value) == kStores - 1);
  CHECK(read_long(tl, tid, counter) == kStores - 1);

  // Forward again: the last store, then the end.
  StopInfo next = tl.resume_forward();
  REQUIRE(next.reason == StopReason::Watchpoint);
  CHECK(as_long(next.new_value) == kStores);
  CHECK(tl.resume_forward().reason == StopReason::TraceEnd);

  // Before the last write: the store has not happened yet.
  back = tl.resume_backward();
  REQUIRE(back.reason == StopReason::Watchpoint);
  CHECK(read_long(tl, tid, counter) == kStores - 1);
  // The watchpoint went in late at least once (else each store since the loop's start was a
  // trap: correct, but the scan this file is about was not run).
  CHECK(tl.checkpoints().late_watches > 0);
}

}  // namespace

// [debug-registers]: late arming is for watchpoints in the debug registers; where writes are
// watched in software (a PVM guest) there is none to count, and the second case's 10,000,000
// passes of a loop beside the watched page take many minutes.
TEST_CASE("a reverse continue from the end lands on the last of a loop's dense stores",
          "[debug-registers]") {
  back_from_the_end(::test::recorded_trace(REWIND_BIN, DENSE_STORES));
}

TEST_CASE(
    "a reverse continue lands on the last dense store when a long stretch without one follows",
    "[debug-registers]") {
  // About 20 ms of the second loop between the last store and the print: the first late
  // arming comes after the last store, and the scans arm earlier until one is counted.
  back_from_the_end(::test::recorded_trace(REWIND_BIN, std::string(DENSE_STORES) + " 10000000"));
}
