// Benchmark: how long the timeline takes to go backwards and to seek, on a trace of more than
// 100,000 events (bench/many_events.c), and how much memory its checkpoints hold. With
// --threads, the same work split over four threads running at once (bench/mt_events.c);
// with --processes, over four fork()ed processes (bench/mp_events.c); with --shared-file,
// writing a file mapped shared (bench/shared_file_events.c). With --far, reverse
// steps far from any syscall instead: in bench/long_compute.c's loop, paused after growing
// stretches of replay (far_steps()), with and without checkpoints inside the interval
// (--far-with: with them only).
// Usage: timeline_latency [--runs N] [--threads | --processes | --shared-file | --far |
// --far-with]. Prints
// medians in milliseconds.
#include <sys/syscall.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_stats.h"
#include "engine/timeline/timeline.h"
#include "tests/support/nm_symbol.h"

using namespace rwd;
using bench::Clock;
using bench::median;
using bench::ms_since;

namespace {

/// Proportional set size of a process, in bytes (/proc/PID/smaps_rollup "Pss:").
uint64_t pss_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  std::string key;
  uint64_t kb;
  std::string unit;
  while (in >> key) {
    if (key == "Pss:") {
      in >> kb >> unit;
      return kb * 1024;
    }
    std::getline(in, unit);
  }
  return 0;
}

/// --far: reverse steps in a loop that makes no syscall for seconds, from points reached by
/// pausing a continue after `delays` of replay. Their cost grows with that stretch (each step
/// replays it, at native speed plus the counting trampoline's), not with its instructions
/// (single steps from the last syscall: about 5 us each, hours here).
int far_steps(const std::string& rewind, int runs, bool without) {
  char tmpl[] = "/tmp/rewind-bench.XXXXXX";
  std::string top = mkdtemp(tmpl), dir = top + "/trace";
  auto t0 = Clock::now();
  if (std::system((std::string(LONG_COMPUTE) + " >/dev/null").c_str()) != 0) return 1;
  double native = ms_since(t0);
  if (std::system((rewind + " record -o " + dir + " " + LONG_COMPUTE + " >/dev/null").c_str()) != 0)
    return 1;
  printf("reverse steps far from any syscall, bench/long_compute.c (native run %.0f ms)\n", native);
  printf(
      "| checkpoints inside the interval | paused after (ms of replay) | first reverse step ms "
      "| reverse-step median ms | forward step ms | reverse steps |\n");
  printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
  // With checkpoints inside the interval (REWIND_INTERVAL_CHECKPOINTS=1), and without them,
  // the default (each step replays the whole stretch, so fewer).
  for (bool inner : {true, false})
    for (int delay : {100, 400, 1600, 3200}) {
      if (!inner && !without) break;
      setenv("REWIND_INTERVAL_CHECKPOINTS", inner ? "1" : "0", 1);
      Timeline tl(dir);
      StopInfo paused;
      std::thread run([&] { paused = tl.resume_forward(); });
      std::this_thread::sleep_for(std::chrono::milliseconds(delay));
      tl.interrupt();
      run.join();
      if (paused.reason != StopReason::Interrupted) {
        fprintf(stderr, "the continue was not paused (reason %d)\n", int(paused.reason));
        return 1;
      }
      std::vector<double> back;
      double fwd = 0;
      for (int i = 0; i < (inner ? std::max(1, runs) : 3); ++i) {
        t0 = Clock::now();
        tl.step_backward(paused.tid);
        back.push_back(ms_since(t0));
        if (i == 0) {
          t0 = Clock::now();
          tl.step_forward(paused.tid);
          fwd = ms_since(t0);
          tl.step_backward(paused.tid);
        }
      }
      printf("| %s | %d | %.0f | %.0f | %.1f | %zu |\n", inner ? "yes" : "no", delay, back[0],
             median(back), fwd, back.size());
      fflush(stdout);
    }
  std::system(("rm -rf " + top).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 15;
  std::string exe = MANY_EVENTS, what = "many_events.c", rewind = REWIND_BIN;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    if (!strcmp(argv[i], "--threads")) exe = MT_EVENTS, what = "mt_events.c (4 threads)";
    if (!strcmp(argv[i], "--processes")) exe = MP_EVENTS, what = "mp_events.c (4 processes)";
    if (!strcmp(argv[i], "--shared-file"))
      exe = SHARED_FILE_EVENTS, what = "shared_file_events.c (pwrite into a shared mapping)";
    if (!strcmp(argv[i], "--far")) return far_steps(rewind, runs, true);
    if (!strcmp(argv[i], "--far-with")) return far_steps(rewind, runs, false);
  }
  char tmpl[] = "/tmp/rewind-bench.XXXXXX";
  std::string dir = std::string(mkdtemp(tmpl)) + "/trace";

  auto t0 = Clock::now();
  if (std::system((exe + " >/dev/null").c_str()) != 0) return 1;
  double native = ms_since(t0);
  t0 = Clock::now();
  // Every syscall traced: the trace keeps its 120,000 events (buffered, they would be a few
  // dozen events carrying the calls as records).
  if (std::system(
          (rewind + " record --no-syscall-buffer -o " + dir + " " + exe + " >/dev/null").c_str()) !=
      0)
    return 1;
  double record = ms_since(t0);
  t0 = Clock::now();
  if (std::system((rewind + " replay -a " + dir + " >/dev/null").c_str()) != 0) return 1;
  double replay = ms_since(t0);

  t0 = Clock::now();
  Timeline tl(dir);
  double open = ms_since(t0);
  uint64_t events = tl.event_count();
  pid_t tid = tl.current().tid;

  // Seek to random events (fixed seed), forwards and backwards.
  std::mt19937_64 rng(42);
  std::vector<double> seeks;
  for (int i = 0; i < runs; ++i) {
    uint64_t target = 2 + rng() % (events - 2);
    t0 = Clock::now();
    tl.seek(target);
    seeks.push_back(ms_since(t0));
  }

  // Reverse-continue to a breakpoint about 10,000 events back.
  uint64_t marker = test::nm_symbol(exe, "marker");
  tl.seek(events - 10);
  tl.add_breakpoint(tl.code_site(tl.current().tid, marker));
  std::vector<double> rcont;
  std::vector<uint64_t> rcont_events;
  for (int i = 0; i < std::min(runs, 10); ++i) {
    t0 = Clock::now();
    StopInfo s = tl.resume_backward();
    rcont.push_back(ms_since(t0));
    rcont_events.push_back(s.event);
    if (s.reason != StopReason::Breakpoint) break;
  }

  // Reverse single steps in the middle of the trace, between two syscalls.
  tl.seek(events / 2);
  StopInfo hit = tl.resume_forward();  // the next marker() call
  tid = hit.tid;                       // the thread that made it
  tl.remove_breakpoint(tl.code_site(tl.current().tid, marker));
  for (int i = 0; i < 5; ++i) tl.step_forward(tid);
  std::vector<double> rstep;
  for (int i = 0; i < runs; ++i) {
    t0 = Clock::now();
    tl.step_backward(tid);
    rstep.push_back(ms_since(t0));
    if (i % 3 == 2) tl.step_forward(tid);  // mix in forward steps
  }

  CheckpointStats cs = tl.checkpoints();
  uint64_t pss = 0;
  for (pid_t p : cs.pids) pss += pss_bytes(p);

  printf("timeline on bench/%s: %llu events\n", what.c_str(), (unsigned long long)events);
  printf("| measure | median ms | runs |\n| --- | ---: | ---: |\n");
  printf("| native run | %.1f | 1 |\n| record | %.1f | 1 |\n| replay -a | %.1f | 1 |\n", native,
         record, replay);
  printf("| open the timeline (to the first instruction) | %.1f | 1 |\n", open);
  printf("| seek to a random event | %.1f | %zu |\n", median(seeks), seeks.size());
  printf("| reverse-continue to a breakpoint ~10,000 events back | %.1f | %zu |\n", median(rcont),
         rcont.size());
  printf("| reverse-step (one instruction) | %.1f | %zu |\n", median(rstep), rstep.size());
  printf("checkpoints: %zu, holding %.1f MiB (sum of their Pss)\n", cs.count,
         double(pss) / (1 << 20));
  if (rcont_events.size() >= 2)
    printf("reverse-continue stops at events %llu, %llu, ... (hit %d times)\n",
           (unsigned long long)rcont_events[0], (unsigned long long)rcont_events[1],
           int(rcont_events.size()));
  std::system(("rm -rf " + dir.substr(0, dir.size() - 6)).c_str());
  return 0;
}
