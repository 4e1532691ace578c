// A scripted random walk over a timeline (forward and backward continues and steps, seeks)
// for a bounded time, checking after every operation that the timeline is where it says and
// that the processes it keeps (the replay and its checkpoints) stay within the documented
// bound. Usage: random_walk SECONDS [PROGRAM SYMBOL]: the walk over the default program
// (bench/many_events, breakpoints on marker) or over PROGRAM, given a fresh directory as its
// argument, with breakpoints on SYMBOL. Exit status 0 when every check held; on a failure the
// trace is kept (REWIND_WALK_TRACE=DIR walks it again).
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "engine/timeline/checkpoint_store.h"
#include "engine/timeline/timeline.h"
#include "engine/trace/process_list.h"
#include "tests/support/nm_symbol.h"

using namespace rwd;

namespace {

/// Processes traced by this process's threads (the replay and its checkpoints).
size_t traced_processes() {
  std::set<std::string> mine;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') mine.insert(e->d_name);
    closedir(d);
  }
  size_t n = 0;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("TracerPid:", 0) == 0) {
        if (mine.count(line.substr(line.find_first_not_of(" \t", 10)))) ++n;
        break;
      }
  }
  if (d) closedir(d);
  return n;
}

const char* stop_name(StopReason r) {
  static const char* kNames[] = {"breakpoint", "watchpoint", "step", "signal",
                                 "seek",       "start",      "end"};
  return kNames[int(r)];
}

int failures = 0;
void check(bool ok, const char* what, unsigned long long a, unsigned long long b) {
  if (ok) return;
  ++failures;
  fprintf(stderr, "FAIL: %s (%llu, %llu)\n", what, a, b);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 30;
  // Another program to walk over (not position-independent: its symbol's address is nm's),
  // run with a fresh directory as its argument, and the function to set breakpoints on.
  bool own = argc > 3;
  std::string program = own ? argv[2] : WALK_PROGRAM, symbol = own ? argv[3] : "marker";
  // Checkpoints after events (and inside intervals, unless REWIND_INTERVAL_CHECKPOINTS=0 turns
  // them off) + the replay + one being made, each a copy of every live process: the bound is
  // set once the trace's process count is known.
  size_t bound = CheckpointStore::kMax +
                 (interval_checkpoints_enabled() ? IntervalCheckpoints::kMax : 0) + 1 + 1;
  char tmpl[] = "/tmp/rewind-walk.XXXXXX";
  std::string top = mkdtemp(tmpl), dir = top + "/trace";
  std::string command = own ? program + " " + top : program;
  // REWIND_WALK_TRACE=DIR walks over a kept trace instead: for the same trace the walk makes
  // the same operations, so a failure (which keeps its trace) can be repeated.
  if (const char* kept = getenv("REWIND_WALK_TRACE"))
    dir = kept;
  else if (std::system(
               (std::string(REWIND_BIN) + " record -o " + dir + " " + command + " >/dev/null")
                   .c_str()) != 0)
    return 2;
  uint64_t marker = test::nm_symbol(program, symbol.c_str());
  if (!marker) {
    fprintf(stderr, "no symbol %s in %s\n", symbol.c_str(), program.c_str());
    return 2;
  }
  // An interrupt from another thread stops a long forward run part-way, and the timeline
  // goes on from there. A trace of 120,000 traced syscalls replays for long enough to be
  // interrupted (buffered, the same program replays in a few events and milliseconds).
  if (!own) {
    std::string slow = dir + "-traced";
    if (std::system((std::string(REWIND_BIN) + " record --no-syscall-buffer -o " + slow + " " +
                     WALK_PROGRAM + " >/dev/null")
                        .c_str()) != 0)
      return 2;
    Timeline tl(slow);
    pid_t tid = tl.current().tid;
    uint64_t events = tl.event_count();
    std::optional<StopInfo> got;
    std::thread run([&] { got = tl.resume_forward(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    tl.interrupt();
    run.join();
    check(got && got->reason == StopReason::Interrupted, "interrupt stops a forward run",
          got ? uint64_t(got->reason) : 99, uint64_t(StopReason::Interrupted));
    check(got && got->event < events, "interrupted before the end", got ? got->event : 0, events);
    uint64_t at = got ? got->event : 0;
    check(tl.step_backward(tid).event <= at, "and goes back from there", 0, 0);
  }
  bound *= std::max<size_t>(1, trace_processes(dir).size());
  Timeline tl(dir);
  pid_t tid = tl.current().tid;
  const CodeSite marker_site = tl.code_site(tid, marker);
  uint64_t events = tl.event_count();
  std::mt19937_64 rng(7);
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  size_t ops = 0, most = 0;
  bool bp = false;
  static const char* kOps[] = {
      "seek",          "toggle breakpoint", "continue",    "reverse-continue",
      "step and back", "step and back",     "reverse step"};
  std::string history;  // the last operations, for a failure's message
  while (std::chrono::steady_clock::now() < until) {
    int op = int(rng() % 7);
    try {
      if (op == 0) {
        uint64_t target = 1 + rng() % events;
        StopInfo s = tl.seek(target);
        check(s.event == target || s.reason == StopReason::TraceEnd, "seek lands on its event",
              s.event, target);
      } else if (op == 1) {
        bp = !bp;
        if (bp)
          tl.add_breakpoint(marker_site);
        else
          tl.remove_breakpoint(marker_site);
      } else if (op == 2) {
        StopInfo s = tl.resume_forward();
        if (bp && s.reason == StopReason::Breakpoint)  // in the thread that hit it
          check(tl.registers(s.tid).rip == marker, "a forward hit is at the breakpoint", 0, 0);
      } else if (op == 3) {
        StopInfo s = tl.resume_backward();
        if (s.reason == StopReason::Breakpoint)
          check(tl.registers(s.tid).rip == marker, "a backward hit is at the breakpoint", 0, 0);
      } else if (op == 4 || op == 5) {
        if (tl.current().reason == StopReason::TraceEnd) continue;
        Registers before = tl.registers(tid);
        StopInfo at = tl.current();
        StopInfo f = tl.step_forward(tid);
        if (f.reason == StopReason::TraceEnd) continue;
        // Another thread's breakpoint or signal can end the step before this one moved: then
        // the step back is not its inverse.
        if (f.reason != StopReason::Step) continue;
        tl.step_backward(tid);
        Registers back = tl.registers(tid);
        if (f.event != at.event) {
          // Back on a syscall instruction (its entry): the instruction already overwrote rcx
          // and r11 (return address, flags), as the timeline documents.
          back.rcx = before.rcx;
          back.r11 = before.r11;
        }
        if (auto d = first_register_difference(before, back)) {
          fprintf(stderr,
                  "from %s at event %llu (orig_rax %lld), %s forward to event %llu, %s back: %s\n",
                  stop_name(at.reason), (unsigned long long)at.event, (long long)before.orig_rax,
                  stop_name(f.reason), (unsigned long long)f.event, stop_name(tl.current().reason),
                  d->c_str());
          check(false, "a step forward and back returns to the same registers", before.rip,
                back.rip);
          std::string saved;
          for (uint64_t e : tl.checkpoints().events) saved += " " + std::to_string(e);
          fprintf(stderr, "  before: %s\n  checkpoints after events:%s\n", history.c_str(),
                  saved.c_str());
        }
      } else {
        tl.step_backward(tid);
      }
    } catch (const std::exception& e) {
      StopInfo at = tl.current();
      fprintf(stderr,
              "FAIL: operation %zu (%s) from %s at event %llu threw: %s (before: %s; trace "
              "kept: %s)\n",
              ops + 1, kOps[op], stop_name(at.reason), (unsigned long long)at.event, e.what(),
              history.c_str(), dir.c_str());
      return 1;
    }
    StopInfo now = tl.current();
    history = std::string(kOps[op]) + " -> " + stop_name(now.reason) + " at event " +
              std::to_string(now.event) + "; " + history.substr(0, 200);
    ++ops;
    size_t n = traced_processes();
    most = std::max(most, n);
    check(n <= bound, "traced processes within the bound", n, bound);
  }
  CheckpointStats cs = tl.checkpoints();
  printf(
      "%zu operations in %.0f s over %llu events: at most %zu traced processes (bound %zu), "
      "%zu checkpoints at the end, %zu inside intervals (%llu replays started from one)\n",
      ops, seconds, (unsigned long long)events, most, bound, cs.count, cs.inner,
      (unsigned long long)cs.inner_starts);
  if (failures) {
    fprintf(stderr, "trace kept: %s\n", dir.c_str());
    return 1;
  }
  std::system(("rm -rf " + top).c_str());
  return 0;
}
