// Benchmark: issue 25's performance targets on long recordings. Three traces of about 10 s of
// recorded run time on the 2-core development VM (kSpinRounds, kSimPasses):
//  - bench/spin_mutex.c with 4 threads (a spin-wait, a mutex, a syscall every 8,192 rounds);
//  - the same work in 1 thread, a single-threaded trace of the same length for comparison;
//  - bench/long_sim.c, a single-threaded loop computing for seconds without a syscall.
// On each it times, through the timeline (the engine under DAP and gdb): seek to a random
// event; reverse-continue to a breakpoint and to a watchpoint hit about 1,000 events back
// (in long_sim, which has no events there, to the last hit before a point paused in its
// loop); a reverse step from there. Each row gives the median, the worst, the number of runs
// and the median number of ptrace stops the replay waited for per operation
// (replay_stops_total). The queue race of the issue is measured by bench/race_reverse (gdb).
// Usage: long_traces [--runs N] [--only spin|single|sim]. Prints medians in milliseconds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_stats.h"
#include "engine/replay/replay_task.h"
#include "engine/timeline/checkpoint_store.h"
#include "engine/timeline/timeline.h"
#include "tests/support/nm_symbol.h"

using namespace rwd;
using bench::Clock;
using bench::median;
using bench::ms_since;

namespace {

/// spin_mutex's rounds in all (its second argument): about 10 s to record with 4 threads and
/// 12 s with 1 on the development VM (2 cores, no hardware counters).
constexpr long kSpinRounds = 128'000'000;
/// long_sim's passes of its loop (its argument): about 10 s natively and recorded.
constexpr long kSimPasses = 350'000'000;

/// Samples of one operation: wall time (ms) and replay stops of each run.
struct Samples {
  std::vector<double> ms;
  std::vector<double> stops;
  int wrong = 0;  ///< runs that did not land where they should (a wrong answer)

  /// Runs `op`, recording its time and stops; `op` returns whether it landed right.
  template <class Op>
  void time(Op op) {
    uint64_t s0 = replay_stops_total();
    auto t0 = Clock::now();
    bool right = op();
    ms.push_back(ms_since(t0));
    stops.push_back(double(replay_stops_total() - s0));
    wrong += !right;
  }
};

void print_row(const char* what, const Samples& s) {
  double worst = s.ms.empty() ? 0 : *std::max_element(s.ms.begin(), s.ms.end());
  printf("| %s | %.0f | %.0f | %zu | %.0f | %d |\n", what, median(s.ms), worst, s.ms.size(),
         median(s.stops), s.wrong);
  fflush(stdout);
}

void print_header(const std::string& title, double native, double record, uint64_t events) {
  printf("\n%s: native run %.0f ms, record %.0f ms, %llu events\n", title.c_str(), native, record,
         (unsigned long long)events);
  printf("| operation | median ms | worst ms | runs | replay stops (median) | wrong |\n");
  printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
}

/// Runs `command` natively, then records it into `dir`; returns {native ms, record ms}, or
/// {-1, -1} when either fails.
std::pair<double, double> record(const std::string& command, const std::string& dir) {
  auto t0 = Clock::now();
  if (std::system((command + " >/dev/null").c_str()) != 0) return {-1, -1};
  double native = ms_since(t0);
  t0 = Clock::now();
  if (std::system((std::string(REWIND_BIN) + " record -o " + dir + " " + command + " >/dev/null")
                      .c_str()) != 0)
    return {-1, -1};
  return {native, ms_since(t0)};
}

/// Where task `tid`'s program is loaded (its first mapping, at file offset 0): the workloads
/// are position-independent, as Debian builds programs, so nm's addresses are offsets.
uint64_t load_base(Timeline& tl, pid_t tid) {
  std::string exe = tl.program_file(tid);
  for (const ProcMapping& m : tl.mappings(tid))
    if (m.path == exe && m.offset == 0) return m.start;
  return 0;
}

/// Seeks to random events (fixed seed), after one seek to the last event (timed into
/// `first`): the timeline has then been over the whole trace once, as a user's session has
/// once it has run to the failure.
void seek_samples(Timeline& tl, int runs, Samples& first, Samples& seeks) {
  std::mt19937_64 rng(25);
  uint64_t events = tl.event_count();
  // A seek past the program's last instruction stops at the end of the trace.
  auto lands = [&](uint64_t target) {
    StopInfo s = tl.seek(target);
    return s.event == target || s.reason == StopReason::TraceEnd;
  };
  first.time([&] { return lands(events - 1); });
  for (int i = 0; i < runs; ++i) {
    uint64_t target = 2 + rng() % (events - 2);
    seeks.time([&] { return lands(target); });
  }
}

/// spin_mutex with `threads` threads: finds marker()'s hits going forwards, then from 1,000
/// events after each hit reverse-continues to it by breakpoint and by watchpoint, and steps
/// back from there.
int spin_trace(const std::string& top, int threads, int runs) {
  std::string dir = top + "/spin" + std::to_string(threads);
  std::string cmd =
      std::string(SPIN_MUTEX) + " " + std::to_string(threads) + " " + std::to_string(kSpinRounds);
  auto [native, rec] = record(cmd, dir);
  if (native < 0) return 1;
  Timeline tl(dir);
  uint64_t base = load_base(tl, tl.current().tid);
  uint64_t marker = base + test::nm_symbol(SPIN_MUTEX, "marker");
  uint64_t mark = base + test::nm_symbol(SPIN_MUTEX, "last_mark");
  uint64_t events = tl.event_count();
  print_header("bench/spin_mutex.c, " + std::to_string(threads) + " thread(s)", native, rec,
               events);

  Samples first, seeks, to_bp, to_watch, steps;
  seek_samples(tl, runs, first, seeks);
  print_row("first replay to the last event", first);
  print_row("seek to a random event", seeks);

  // marker()'s hits, going forwards from the start.
  tl.seek(1);
  CodeSite site = tl.code_site(tl.current().tid, marker);
  tl.add_breakpoint(site);
  std::vector<StopInfo> hits;
  for (;;) {
    StopInfo s = tl.resume_forward();
    if (s.reason != StopReason::Breakpoint) break;
    hits.push_back(s);
  }
  // From 1,000 events after a hit, or from just before the next hit where that is nearer.
  auto start_after = [&](size_t i) {
    uint64_t from = hits[i].event + 1000;
    if (i + 1 < hits.size()) from = std::min(from, hits[i + 1].event - 1);
    return std::min(from, events - 1);
  };
  const size_t measured = std::min(hits.size(), size_t(runs));
  std::vector<double> back;
  for (size_t i = 0; i < measured; ++i) {
    const StopInfo& h = hits[i];
    tl.seek(start_after(i));
    back.push_back(double(start_after(i) - h.event));
    StopInfo got;
    bool right = false;
    to_bp.time([&] {
      got = tl.resume_backward();
      return right =
                 got.reason == StopReason::Breakpoint && got.event == h.event && got.tid == h.tid;
    });
    if (!right)
      fprintf(stderr,
              "reverse-continue from event %llu: reason %d at event %llu (task %d), not "
              "the hit at event %llu (task %d)\n",
              (unsigned long long)start_after(i), int(got.reason), (unsigned long long)got.event,
              int(got.tid), (unsigned long long)h.event, int(h.tid));
    for (int k = 0; k < 3; ++k) steps.time([&] { return tl.step_backward(h.tid).tid == h.tid; });
  }
  tl.remove_breakpoint(site);
  printf("(reverse-continues below start %.0f events after the hit, median)\n", median(back));
  print_row("reverse-continue to a breakpoint up to 1,000 events back", to_bp);
  print_row("reverse-step (one instruction, from the hit)", steps);

  if (!tl.add_watchpoint(mark, 8, WatchKind::Write)) return 1;
  for (size_t i = 0; i < measured; ++i) {
    const StopInfo& h = hits[i];
    tl.seek(start_after(i));
    to_watch.time([&] {
      StopInfo got = tl.resume_backward();
      // Stopped on marker()'s store, before it runs (gdb's reverse semantics).
      return got.reason == StopReason::Watchpoint && got.tid == h.tid && got.event == h.event;
    });
  }
  tl.remove_watchpoint(mark, 8, WatchKind::Write);
  print_row("reverse-continue to a watchpoint hit up to 1,000 events back", to_watch);
  printf("marker() hits: %zu; checkpoints at the end: %zu\n", hits.size(), tl.checkpoints().count);
  return 0;
}

/// long_sim: pauses a continue after growing stretches of replay inside the loop, then from
/// there reverse-continues to record_energy()'s last call (breakpoint) and to its last write
/// of S.ref_energy (watchpoint), and steps back.
int sim_trace(const std::string& top, int runs) {
  std::string dir = top + "/sim";
  auto [native, rec] = record(std::string(LONG_SIM) + " " + std::to_string(kSimPasses), dir);
  if (native < 0) return 1;
  Timeline probe(dir);
  uint64_t base = load_base(probe, probe.current().tid);
  uint64_t fn = base + test::nm_symbol(LONG_SIM, "record_energy");
  uint64_t state = base + test::nm_symbol(LONG_SIM, "S");
  uint64_t energy = state + 8 * 16;  // S.ref_energy, after 8 bodies of two doubles
  uint64_t events = probe.event_count();
  print_header("bench/long_sim.c (no syscall in its loop)", native, rec, events);
  printf("checkpoints inside event intervals: %s\n",
         interval_checkpoints_enabled() ? "on" : "off (REWIND_INTERVAL_CHECKPOINTS=0)");

  Samples first, seeks, to_bp, to_watch, steps;
  seek_samples(probe, runs, first, seeks);
  print_row("first replay to the last event", first);
  print_row("seek to a random event", seeks);

  // Each run: timelines paused further into the loop each time (one for the breakpoint and
  // the step, one for the watchpoint, so that both go back from the same point).
  auto paused_at = [&](int i, StopInfo& paused) {
    auto tl = std::make_unique<Timeline>(dir);
    int delay = 1000 + int(i * (native * 0.6) / std::max(1, runs));
    std::thread run([&] { paused = tl->resume_forward(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    tl->interrupt();
    run.join();
    if (paused.reason != StopReason::Interrupted) tl.reset();
    return tl;
  };
  for (int i = 0; i < runs; ++i) {
    StopInfo paused;
    auto tl = paused_at(i, paused);
    if (!tl) {
      fprintf(stderr, "the continue was not paused (reason %d)\n", int(paused.reason));
      return 1;
    }
    pid_t tid = paused.tid;
    steps.time([&] { return tl->step_backward(tid).reason == StopReason::Step; });
    CodeSite site = tl->code_site(tid, fn);
    tl->add_breakpoint(site);
    to_bp.time([&] {
      StopInfo hit = tl->resume_backward();
      return hit.reason == StopReason::Breakpoint && tl->registers(tid).rip == fn;
    });
    tl = paused_at(i, paused);
    if (!tl || !tl->add_watchpoint(energy, 8, WatchKind::Write)) return 1;
    to_watch.time([&] {
      StopInfo w = tl->resume_backward();
      uint64_t rip = tl->registers(tid).rip;
      // On record_energy()'s store, before it runs.
      return w.reason == StopReason::Watchpoint && rip > fn && rip < fn + 0x200;
    });
  }
  print_row("reverse-step (one instruction, paused in the loop)", steps);
  print_row("reverse-continue to the last call of record_energy()", to_bp);
  print_row("reverse-continue to the last write of S.ref_energy", to_watch);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 7;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::max(1, atoi(argv[++i]));
    if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
  }
  char tmpl[] = "/tmp/rewind-bench.XXXXXX";
  std::string top = mkdtemp(tmpl);
  int rc = 0;
  if (!rc && (only.empty() || only == "spin")) rc = spin_trace(top, 4, runs);
  if (!rc && (only.empty() || only == "single")) rc = spin_trace(top, 1, runs);
  if (!rc && (only.empty() || only == "sim")) rc = sim_trace(top, runs);
  std::system(("rm -rf " + top).c_str());
  if (rc) fprintf(stderr, "long_traces: a recording or a pause failed\n");
  return rc;
}
