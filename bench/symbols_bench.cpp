// Symbol loading and stack building figures (issue: "time to load symbols for python3 and
// for libR.so, and median time to build a 20-frame stack with variables"). Prints a table.
//
//   build/bench/symbols_bench [RUNS]
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_stats.h"
#include "engine/debugger/timeline_target.h"
#include "engine/symbols/elf_image.h"
#include "engine/symbols/variables.h"
#include "tests/symbols/live_process.h"

using namespace rwd;
using bench::median;

namespace {

double now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

double time_median(int runs, const std::function<void()>& f) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    double a = now_ms();
    f();
    t.push_back(now_ms() - a);
  }
  return median(t);
}

void symbol_load_row(const std::string& path, int runs) {
  if (access(path.c_str(), R_OK) != 0) {
    printf("%-34s  (not installed)\n", path.c_str());
    return;
  }
  uint64_t base = ElfImage::open(path)->first_load_vaddr();
  size_t symbols = 0;
  bool debug = false;
  double load = time_median(runs, [&] {
    Module m(path, path, base);
    symbols = m.symbols().size();
    debug = m.has_debug_info();
  });
  std::string index = "-", lines = "-";
  if (debug) {
    double t = time_median(runs, [&] {
      Module m(path, path, base);
      m.dwarf()->functions_named("main");  // reads every unit's functions and globals
    });
    index = std::to_string(int(t)) + " ms";
    t = time_median(runs, [&] {
      Module m(path, path, base);
      m.dwarf()->line_addresses("no-such-file.c", 1);  // reads every unit's line table
    });
    lines = std::to_string(int(t)) + " ms";
  }
  printf("%-34s  %8zu  %-5s  %9.1f ms  %10s  %10s\n", path.c_str(), symbols, debug ? "yes" : "no",
         load, index.c_str(), lines.c_str());
}

/// Builds the stack of `tid` with every frame's arguments and locals formatted; returns the
/// number of frames and values.
std::pair<size_t, size_t> stack_with_variables(Target& t, ModuleList& mods, pid_t tid) {
  auto frames = build_call_stack(t, mods, tid);
  FrameVariables vars(t, mods, frames);
  size_t values = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    for (auto& v : vars.arguments(i)) values += !format_value(v.value, t).empty();
    for (auto& v : vars.locals(i)) values += !format_value(v.value, t).empty();
  }
  return {frames.size(), values};
}

}  // namespace

int main(int argc, char** argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 9;
  printf("Symbol loading (median of %d; page cache warm)\n", runs);
  printf("%-34s  %8s  %-5s  %12s  %10s  %10s\n", "file", "symbols", "dwarf", "load+symbols",
         "functions", "lines");
  for (const char* p : {"/usr/bin/python3.11", "/usr/lib/R/lib/libR.so",
                        "/lib/x86_64-linux-gnu/libc.so.6", DEEP_STACK})
    symbol_load_row(p, runs);

  printf("\nA 20-frame stack with arguments and locals formatted (median of %d)\n", runs);
  {
    test::LiveProcess p(DEEP_STACK);
    PtraceTarget t(p.pid());
    ModuleList mods;
    mods.refresh(t);
    auto* exe = mods.executable();
    uint64_t bp = exe->to_runtime(exe->symbols().lookup("stop_here").front()->addr);
    if (!p.run_to(bp, 0)) return 1;
    mods.refresh(t);
    stack_with_variables(t, mods, p.pid());  // DWARF opened once, as in a session
    std::pair<size_t, size_t> shape;
    double ms = time_median(runs, [&] { shape = stack_with_variables(t, mods, p.pid()); });
    printf("%-34s  %zu frames, %zu values: %.2f ms\n", "live process (ptrace)", shape.first,
           shape.second, ms);
  }
  {
    char tmpl[] = "/tmp/rewind-bench-symbols.XXXXXX";
    std::string dir = mkdtemp(tmpl);
    std::string cmd =
        std::string(REWIND_BIN) + " record -o " + dir + "/t " + DEEP_STACK + " >/dev/null";
    if (std::system(cmd.c_str()) != 0) return 1;
    Timeline tl(dir + "/t");
    pid_t tid = tl.current().tid;
    TimelineTarget t(tl, tid);
    ModuleList mods;
    mods.refresh(t);
    auto* exe = mods.executable();
    tl.add_breakpoint(tl.code_site(
        tl.current().tid, exe->to_runtime(exe->symbols().lookup("stop_here").front()->addr)));
    tl.resume_forward();
    mods.refresh(t);
    stack_with_variables(t, mods, tid);
    std::pair<size_t, size_t> shape;
    double ms = time_median(runs, [&] { shape = stack_with_variables(t, mods, tid); });
    printf("%-34s  %zu frames, %zu values: %.2f ms\n", "replay (timeline)", shape.first,
           shape.second, ms);
    std::system(("rm -rf " + dir).c_str());
  }
  return 0;
}
