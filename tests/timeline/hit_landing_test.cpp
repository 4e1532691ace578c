// Reverse continues that count many hits inside one event interval before they land
// (engine/timeline: Run::hits_at), over a real recording of tests/programs/periodic_marks.c:
// a loop with no syscall calling mark(k) every 2^18 passes. The run to the last hit a scan
// found starts from the latest checkpoint the scan went through before that hit, counting
// only the hits after it; each landing is checked by mark()'s argument and the value of
// last_mark there, which a hit counted once too often or too few would change.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "engine/timeline/timeline.h"
#include "tests/support/nm_symbol.h"
#include "tests/support/recorded_trace.h"

using namespace rwd;

namespace {

/// periodic_marks recorded once per test run (100,000,000 passes: mark(1) ... mark(381)),
/// deleted when the test program ends.
const std::string& trace() {
  return ::test::recorded_trace(REWIND_BIN, std::string(PERIODIC_MARKS) + " 100000000");
}

constexpr long kLastMark = 100000000L >> 18;  // 381

uint64_t symbol(const char* name) {
  uint64_t addr = rwd::test::nm_symbol(PERIODIC_MARKS, name);  // linked -no-pie: nm's address
  REQUIRE(addr != 0);
  return addr;
}

long read_long(Timeline& tl, pid_t tid, uint64_t addr) {
  auto bytes = tl.read_memory(tid, addr, 8);
  REQUIRE(bytes.size() == 8);
  long v = 0;
  std::memcpy(&v, bytes.data(), 8);
  return v;
}

}  // namespace

TEST_CASE("reverse continues from the end land on each call of mark() in turn") {
  Timeline tl(trace());
  const pid_t tid = tl.current().tid;
  const uint64_t mark = symbol("mark"), last_mark = symbol("last_mark");
  // Forwards to the end first: the replay leaves checkpoints inside the loop behind.
  REQUIRE(tl.resume_forward().reason == StopReason::TraceEnd);
  CodeSite site = tl.code_site(tid, mark);
  tl.add_breakpoint(site);
  for (long k = kLastMark; k > kLastMark - 4; --k) {
    StopInfo s = tl.resume_backward();
    REQUIRE(s.reason == StopReason::Breakpoint);
    Registers r = tl.registers(tid);
    CHECK(r.rip == mark);
    CHECK(long(r.rdi) == k);  // mark(k): k in rdi at its entry
    CHECK(read_long(tl, tid, last_mark) == k - 1);
  }
  // Forwards again from there: the next call.
  StopInfo next = tl.resume_forward();
  REQUIRE(next.reason == StopReason::Breakpoint);
  CHECK(long(tl.registers(tid).rdi) == kLastMark - 2);
  tl.remove_breakpoint(site);
}

// [debug-registers]: with writes watched in software (a PVM guest), last_mark's page is made
// read-only, and `state`, 8 bytes before it, is written at every pass: 100,000,000 faults,
// each a ptrace stop (still running after 6 minutes on 2026-12-01). The "did not enter
// mprotect (stop kind 2, signal 5)" this case once stopped with there was an interrupt
// reported ahead of a pending SIGTRAP (wait_stop, tests/unit/interrupt_stop_test.cpp).
TEST_CASE("reverse continues from the end land on each write of last_mark in turn",
          "[debug-registers]") {
  Timeline tl(trace());
  const pid_t tid = tl.current().tid;
  const uint64_t last_mark = symbol("last_mark");
  REQUIRE(tl.resume_forward().reason == StopReason::TraceEnd);
  REQUIRE(tl.add_watchpoint(last_mark, 8, WatchKind::Write));
  for (long k = kLastMark; k > kLastMark - 3; --k) {
    StopInfo s = tl.resume_backward();
    REQUIRE(s.reason == StopReason::Watchpoint);
    // On mark(k)'s store, before it ran (gdb's reverse semantics).
    CHECK(read_long(tl, tid, last_mark) == k - 1);
  }
  tl.remove_watchpoint(last_mark, 8, WatchKind::Write);
}
