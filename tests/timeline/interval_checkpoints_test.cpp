// Checkpoints inside an event interval (engine/timeline/checkpoint_store.h,
// IntervalCheckpoints) over a real recording of tests/programs/compute_loop.c: a loop of
// about 1.5 s with no syscall, which writes `half` once, halfway. The runs that reach a
// point in that loop leave checkpoints behind, and reverse steps there start from them
// instead of from the program's last syscall. Each landing is checked against the state a
// forward step from it reaches, and against the loop's own state at the write.
#include <elf.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/replay/replay_task.h"
#include "engine/timeline/timeline.h"
#include "tests/support/nm_symbol.h"
#include "tests/support/recorded_trace.h"

using namespace rwd;

namespace {

/// compute_loop recorded once per test run (1,000,000,000 passes, about 1.5 s), deleted when
/// the test program ends.
const std::string& trace() {
  return ::test::recorded_trace(REWIND_BIN, std::string(COMPUTE_LOOP) + " 1000000000");
}

/// The runtime address of symbol `name` of `program` (a PIE; compute_loop unless told) in task
/// `tid`'s process: its offset (nm) plus the load base, told by the entry point (AT_ENTRY, the
/// offset of _start).
uint64_t symbol(Timeline& tl, pid_t tid, const char* name, const char* program = COMPUTE_LOOP) {
  uint64_t offset = rwd::test::nm_symbol(program, name),
           start = rwd::test::nm_symbol(program, "_start");
  REQUIRE(offset != 0);
  REQUIRE(start != 0);
  std::vector<uint8_t> auxv = tl.auxv(tid);
  for (size_t i = 0; i + 16 <= auxv.size(); i += 16) {
    uint64_t type = 0, value = 0;
    std::memcpy(&type, &auxv[i], 8);
    std::memcpy(&value, &auxv[i + 8], 8);
    if (type == AT_ENTRY) return value - start + offset;
  }
  FAIL("no AT_ENTRY in the auxiliary vector");
  return 0;
}

uint64_t read_u64(Timeline& tl, pid_t tid, uint64_t addr) {
  auto bytes = tl.read_memory(tid, addr, 8);
  REQUIRE(bytes.size() == 8);
  uint64_t v = 0;
  std::memcpy(&v, bytes.data(), 8);
  return v;
}

/// Runs `tl` forwards to the next hit of a breakpoint at `addr` in task `tid`'s code (which
/// must come) and returns that stop; the breakpoint is removed.
StopInfo run_to(Timeline& tl, pid_t tid, uint64_t addr) {
  const CodeSite site = tl.code_site(tid, addr);
  tl.add_breakpoint(site);
  StopInfo hit = tl.resume_forward();
  REQUIRE(hit.reason == StopReason::Breakpoint);
  tl.remove_breakpoint(site);
  return hit;
}

/// From where `tl` stands (task `tid`, inside compute()'s loop): `n` reverse steps, each of
/// which must start from a checkpoint inside the interval and leave `state` at `state_now`
/// (the steps stay in the loop's current pass); then `n` forward steps, which must come
/// back through the same registers.
void steps_back_and_forth(Timeline& tl, pid_t tid, uint64_t state_now, int n) {
  const uint64_t state = symbol(tl, tid, "state");
  std::vector<Registers> trail{tl.registers(tid)};
  for (int i = 0; i < n; ++i) {
    uint64_t starts = tl.checkpoints().inner_starts;
    StopInfo s = tl.step_backward(tid);
    REQUIRE(s.reason == StopReason::Step);
    trail.push_back(tl.registers(tid));
    INFO("reverse step " << i << " to rip " << std::hex << trail.back().rip);
    CHECK(trail.back().rip != trail[trail.size() - 2].rip);
    CHECK(read_u64(tl, tid, state) == state_now);
    // It replayed from a checkpoint inside the loop's interval, not from the last syscall.
    CHECK(tl.checkpoints().inner_starts > starts);
  }
  for (int i = n - 1; i >= 0; --i) {
    StopInfo s = tl.step_forward(tid);
    REQUIRE(s.reason == StopReason::Step);
    Registers r = tl.registers(tid);
    INFO("forward step back to trail entry " << i);
    CHECK(registers_equal(r, trail[size_t(i)]));
  }
}

}  // namespace

TEST_CASE("a reverse step from a function's first instruction after a long loop goes to its call") {
  // Without checkpoints inside the interval: the step counts the passes of the direct call
  // before the function (the return address tells where), not single steps of the loop
  // since the last syscall (about 10^10 of them: that method does not finish, and the test
  // then runs into ctest's time limit).
  setenv("REWIND_INTERVAL_CHECKPOINTS", "0", 1);
  Timeline tl(trace());
  pid_t tid = tl.current().tid;
  const uint64_t finished = symbol(tl, tid, "finished");
  run_to(tl, tid, finished);
  const Registers at_entry = tl.registers(tid);
  REQUIRE(at_entry.rip == finished);
  uint64_t ret = read_u64(tl, tid, at_entry.rsp);

  uint64_t stops = replay_stops_total();
  StopInfo back = tl.step_backward(tid);
  REQUIRE(back.reason == StopReason::Step);
  const Registers at_call = tl.registers(tid);
  CHECK(at_call.rip == ret - 5);               // on main's `call finished`
  CHECK(at_call.rsp == at_entry.rsp + 8);      // before it pushed the return address
  CHECK(replay_stops_total() - stops < 5000);  // counted passes, not single steps
  CHECK(tl.checkpoints().inner == 0);

  // And forwards again: into finished() with the registers it had there.
  REQUIRE(tl.step_forward(tid).reason == StopReason::Step);
  CHECK(registers_equal(tl.registers(tid), at_entry));
}

TEST_CASE(
    "a reverse step from a syscall's entry after a long loop goes to the instruction before") {
  // Every syscall traced: the first one after the loop (printf's) follows the loop in the
  // same interval, with no buffered syscall to count steps from. The step back from its
  // entry replays to the entry with a breakpoint on the syscall instruction, instead of
  // single-stepping the 10^8 passes of the loop since the last event (that did not finish).
  setenv("REWIND_INTERVAL_CHECKPOINTS", "0", 1);
  Timeline tl(::test::recorded_trace(
      REWIND_BIN, std::string("--no-syscall-buffer ") + COMPUTE_LOOP + " 100000000"));
  pid_t tid = tl.current().tid;
  StopInfo hit = run_to(tl, tid, symbol(tl, tid, "finished"));
  const uint64_t loop_event = hit.event;

  // Just after the next syscall, one step back is its entry: the task on its syscall
  // instruction, the syscall's number in rax.
  REQUIRE(tl.seek(loop_event + 1).event == loop_event + 1);
  REQUIRE(tl.step_backward(tid).reason == StopReason::Step);
  const Registers entry = tl.registers(tid);
  CHECK(tl.read_memory(tid, entry.rip, 2) == std::vector<uint8_t>{0x0f, 0x05});
  // One more is the instruction before it, between the loop's event and the syscall's.
  uint64_t stops = replay_stops_total();
  StopInfo back = tl.step_backward(tid);
  REQUIRE(back.reason == StopReason::Step);
  CHECK(back.event == loop_event);
  const Registers before = tl.registers(tid);
  CHECK(before.rip < entry.rip);
  CHECK(before.rip + 16 > entry.rip);  // the instruction just before, in the same wrapper
  CHECK(before.rsp == entry.rsp);
  CHECK(replay_stops_total() - stops < 5000);  // breakpoint hits, not single steps

  // Forwards again: onto the syscall instruction, with the entry's registers (rcx and r11
  // aside: the instruction had not yet written them), then the syscall itself.
  REQUIRE(tl.step_forward(tid).reason == StopReason::Step);
  Registers on = tl.registers(tid);
  on.rcx = entry.rcx;
  on.r11 = entry.r11;
  CHECK(registers_equal(on, entry));
  StopInfo done = tl.step_forward(tid);
  CHECK(done.event == loop_event + 1);
}

TEST_CASE("a step onto a syscall instruction after a long loop, then back, undoes the step") {
  // With checkpoints inside intervals (the default). The step back from the syscall's entry
  // leaves a checkpoint on the instruction before it; a step forward onto the syscall
  // instruction and back again is counted from that checkpoint. No counting trampoline fits
  // on the syscall instruction, so the step back falls back to single steps: from that
  // checkpoint, one; from the event, the 10^8 passes of the loop (the random walk over
  // clone_vm_walk hung there, in librewind_preload.so's scan of libc). Both ways of making
  // the write: through the preload library's traced-syscall function (buffered recording:
  // a write to the terminal stays traced), and libc's own wrapper (every syscall traced).
  setenv("REWIND_INTERVAL_CHECKPOINTS", "1", 1);
  const char* how = GENERATE("", "--no-syscall-buffer ");
  INFO("recorded with: '" << how << "'");
  Timeline tl(::test::recorded_trace(REWIND_BIN, how + std::string(COMPUTE_LOOP) + " 100000000"));
  pid_t tid = tl.current().tid;
  StopInfo hit = run_to(tl, tid, symbol(tl, tid, "finished"));
  REQUIRE(tl.seek(hit.event + 1).event == hit.event + 1);
  REQUIRE(tl.step_backward(tid).reason == StopReason::Step);  // to the syscall's entry
  const Registers entry = tl.registers(tid);
  REQUIRE(tl.read_memory(tid, entry.rip, 2) == std::vector<uint8_t>{0x0f, 0x05});
  REQUIRE(tl.step_backward(tid).reason == StopReason::Step);  // the instruction before
  const Registers before = tl.registers(tid);
  REQUIRE(before.rip < entry.rip);

  REQUIRE(tl.step_forward(tid).reason == StopReason::Step);  // onto the syscall instruction
  REQUIRE(tl.registers(tid).rip == entry.rip);
  uint64_t stops = replay_stops_total();
  StopInfo back = tl.step_backward(tid);
  REQUIRE(back.reason == StopReason::Step);
  CHECK(back.event == hit.event);
  CHECK(registers_equal(tl.registers(tid), before));
  // Not single steps of the loop (10^9 and more): a replay from the trace's start to the
  // loop's event, to count passes, makes about 6,500 stops.
  CHECK(replay_stops_total() - stops < 20000);
  // And the timeline goes on from there: forwards through the syscall.
  REQUIRE(tl.step_forward(tid).reason == StopReason::Step);
  CHECK(tl.step_forward(tid).event == hit.event + 1);
}

TEST_CASE("a forward run through a long loop leaves checkpoints that reverse steps start from") {
  setenv("REWIND_INTERVAL_CHECKPOINTS", "1", 1);  // the default; other cases turn them off
  Timeline tl(trace());
  const uint64_t half = symbol(tl, tl.current().tid, "half");
  REQUIRE(tl.add_watchpoint(half, 8, WatchKind::Write));
  StopInfo s = tl.resume_forward();
  REQUIRE(s.reason == StopReason::Watchpoint);
  pid_t tid = s.tid;
  // Half a second of the loop ran since the last syscall: several checkpoints on the way.
  CHECK(tl.checkpoints().inner >= 2);
  uint64_t written = read_u64(tl, tid, half);
  tl.remove_watchpoint(half, 8, WatchKind::Write);
  steps_back_and_forth(tl, tid, written, 4);

  SECTION("the same from the write found by a reverse continue from the end") {
    REQUIRE(tl.resume_forward().reason == StopReason::TraceEnd);
    REQUIRE(tl.add_watchpoint(half, 8, WatchKind::Write));
    StopInfo back = tl.resume_backward();
    REQUIRE(back.reason == StopReason::Watchpoint);
    // On the writing instruction, before it ran (gdb's reverse semantics).
    REQUIRE(read_u64(tl, back.tid, half) == 0);
    REQUIRE(read_u64(tl, back.tid, symbol(tl, back.tid, "state")) == written);
    tl.remove_watchpoint(half, 8, WatchKind::Write);
    steps_back_and_forth(tl, back.tid, written, 3);
  }
}

// [debug-registers]: where writes are watched in software (a PVM guest), the loop writes the
// watched page at every pass, and each write is a page fault and two remote mprotect calls:
// the scan back through 0.75 s of loop did not end within this test's 300 s there.
TEST_CASE("a reverse continue from far into a long loop scans back from checkpoints inside it",
          "[debug-registers]") {
  setenv("REWIND_INTERVAL_CHECKPOINTS", "1", 1);  // the default; other cases turn them off
  Timeline tl(trace());
  const pid_t first = tl.current().tid;
  const uint64_t half = symbol(tl, first, "half");
  // Forwards to the write, then on to finished(), right after the loop: the same interval,
  // 0.75 s of the loop later, with checkpoints inside it on the way.
  REQUIRE(tl.add_watchpoint(half, 8, WatchKind::Write));
  StopInfo w = tl.resume_forward();
  REQUIRE(w.reason == StopReason::Watchpoint);
  const uint64_t written = read_u64(tl, w.tid, half);
  tl.remove_watchpoint(half, 8, WatchKind::Write);
  CodeSite site = tl.code_site(w.tid, symbol(tl, w.tid, "finished"));
  tl.add_breakpoint(site);
  StopInfo at = tl.resume_forward();
  REQUIRE(at.reason == StopReason::Breakpoint);
  REQUIRE(at.event == w.event);  // no syscall between the write and the call
  tl.remove_breakpoint(site);

  // Back to the write: the scans start from checkpoints inside the loop, each ending where
  // the one before started, not from the program's last syscall.
  uint64_t starts = tl.checkpoints().inner_starts;
  REQUIRE(tl.add_watchpoint(half, 8, WatchKind::Write));
  StopInfo back = tl.resume_backward();
  REQUIRE(back.reason == StopReason::Watchpoint);
  CHECK(back.event == w.event);
  // On the writing instruction, before it ran (gdb's reverse semantics).
  CHECK(read_u64(tl, back.tid, half) == 0);
  CHECK(read_u64(tl, back.tid, symbol(tl, back.tid, "state")) == written);
  CHECK(tl.checkpoints().inner_starts > starts);
  // And forwards again from there: the same write.
  StopInfo again = tl.resume_forward();
  REQUIRE(again.reason == StopReason::Watchpoint);
  CHECK(read_u64(tl, again.tid, half) == written);
}

TEST_CASE("an interrupted reverse continue stops inside the long loop it scans back through") {
  setenv("REWIND_INTERVAL_CHECKPOINTS", "1", 1);  // the default; other cases turn them off
  Timeline tl(trace());
  const pid_t first = tl.current().tid;
  const uint64_t state = symbol(tl, first, "state");
  CodeSite done = tl.code_site(first, symbol(tl, first, "finished"));
  tl.add_breakpoint(done);
  StopInfo at = tl.resume_forward();
  REQUIRE(at.reason == StopReason::Breakpoint);
  tl.remove_breakpoint(done);
  const uint64_t final_state = read_u64(tl, at.tid, state);
  REQUIRE(final_state != 0);

  // Back to main's first instruction: 1.5 s of loop to scan back through, window by window
  // from the checkpoints inside it. A pause asked for part-way stops the search at the
  // earliest point it has shown to hold no hit after it: inside the loop, where `state` is
  // neither its value before the loop (0) nor its last. (Pressed until it is taken: one that
  // comes before the operation has started is dropped, as gdb drops an early Ctrl-C.)
  CodeSite start = tl.code_site(first, symbol(tl, first, "main"));
  tl.add_breakpoint(start);
  std::optional<StopInfo> got;
  std::atomic<bool> ended{false};
  std::thread run([&] {
    got = tl.resume_backward();
    ended = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  while (!ended) {
    tl.interrupt();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  run.join();
  REQUIRE(got);
  REQUIRE(got->reason == StopReason::Interrupted);
  CHECK(got->event == at.event);  // in the loop's interval
  const uint64_t paused = read_u64(tl, got->tid, state);
  CHECK(paused != 0);
  CHECK(paused != final_state);

  // The timeline goes on from there: forwards to the same end of the loop, and back again
  // to main's first instruction.
  tl.remove_breakpoint(start);
  tl.add_breakpoint(done);
  StopInfo again = tl.resume_forward();
  REQUIRE(again.reason == StopReason::Breakpoint);
  CHECK(read_u64(tl, again.tid, state) == final_state);
  tl.remove_breakpoint(done);
  tl.add_breakpoint(start);
  StopInfo back = tl.resume_backward();
  CHECK(back.reason == StopReason::Breakpoint);
  CHECK(read_u64(tl, back.tid, state) == 0);
}

// [debug-registers]: where writes are watched in software, each of the loop's writes is a
// page fault and two remote mprotect calls, which this case does not measure.
TEST_CASE(
    "reverse continues through a loop's writes after buffered reads start inside the "
    "interval",
    "[debug-registers]") {
  setenv("REWIND_INTERVAL_CHECKPOINTS", "1", 1);  // the default; other cases turn them off
  constexpr uint64_t kWrites = 20000;
  Timeline tl(::test::recorded_trace(REWIND_BIN,
                                     std::string(BUFFERED_WRITES) + " " + std::to_string(kWrites)));
  const pid_t tid = tl.current().tid;
  const uint64_t counter = symbol(tl, tid, "counter", BUFFERED_WRITES);
  // To finished(), right after the loop: the reads before it were buffered, so the interval
  // holds both them and the loop.
  StopInfo at = run_to(tl, tid, symbol(tl, tid, "finished", BUFFERED_WRITES));
  REQUIRE(read_u64(tl, tid, counter) == kWrites);
  REQUIRE(tl.add_watchpoint(counter, 8, WatchKind::Write));
  // Each reverse continue stops just after the write before (Timeline::WatchStop::AfterWrite,
  // as an R line step's do). After the first, which scans the interval, each starts from a
  // checkpoint inside it that the run to the hit before left: one taken after the task used
  // buffered records, which the replay from there must not use again.
  for (uint64_t expect = kWrites; expect > kWrites - 6; --expect) {
    INFO("reverse continue to the write of " << expect);
    const uint64_t starts = tl.checkpoints().inner_starts;
    StopInfo back = tl.resume_backward(Timeline::WatchStop::AfterWrite);
    REQUIRE(back.reason == StopReason::Watchpoint);
    CHECK(back.event == at.event);
    CHECK(read_u64(tl, tid, counter) == expect);
    if (expect < kWrites) CHECK(tl.checkpoints().inner_starts > starts);
  }
  // Forwards from there: the next write, then the rest of the program as recorded.
  StopInfo next = tl.resume_forward();
  REQUIRE(next.reason == StopReason::Watchpoint);
  CHECK(read_u64(tl, tid, counter) == kWrites - 4);
  tl.remove_watchpoint(counter, 8, WatchKind::Write);
  CHECK(tl.resume_forward().reason == StopReason::TraceEnd);
}
