// Timing helpers shared by the C++ benchmarks under bench/ (the Python ones use
// bench_common.py): wall time since a point, the median of samples, checked samples and their
// Markdown row, and a command recorded for a benchmark.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "engine/timeline/timeline.h"

namespace rwd::bench {

using Clock = std::chrono::steady_clock;

/// Milliseconds of wall time (steady clock) since `t0`.
inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// The median of `v` (the upper one of an even count); 0 for no samples.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// A command run natively and then recorded by `rewind` (with `record_options`, such as
/// "--no-syscall-buffer") into a new directory under /tmp (removed with what it holds when
/// this goes).
struct RecordedCommand {
  std::string top;                      ///< the directory (/tmp/rewind-bench-NAME.XXXXXX)
  std::string trace;                    ///< the trace in it
  double native_ms = 0, record_ms = 0;  ///< wall times of the two runs
  bool ok = false;                      ///< both exited with status 0
  RecordedCommand(const std::string& rewind, const std::string& name, const std::string& cmd,
                  const std::string& record_options = "") {
    std::string tmpl = "/tmp/rewind-bench-" + name + ".XXXXXX";
    if (!mkdtemp(tmpl.data())) return;
    top = tmpl;
    trace = top + "/trace";
    auto t0 = Clock::now();
    if (std::system((cmd + " >/dev/null").c_str()) != 0) return;
    native_ms = ms_since(t0);
    t0 = Clock::now();
    if (std::system(
            (rewind + " record " + record_options + " -o " + trace + " " + cmd + " >/dev/null")
                .c_str()) != 0)
      return;
    record_ms = ms_since(t0);
    ok = true;
  }
  ~RecordedCommand() {
    if (!top.empty()) std::system(("rm -rf " + top).c_str());
  }
  RecordedCommand(const RecordedCommand&) = delete;
  RecordedCommand& operator=(const RecordedCommand&) = delete;
};

/// Timed samples of one checked operation: wall times (ms) and how many gave a wrong result.
struct Samples {
  std::vector<double> ms;
  int wrong = 0;
  /// Times `op` (returning whether its result was right) once.
  template <class Op>
  void time(Op op) {
    auto t0 = Clock::now();
    bool right = op();
    ms.push_back(ms_since(t0));
    wrong += !right;
  }
};

/// Runs that threw: `guarded(op)` wraps a checked operation so that an exception is printed
/// on stderr (prefixed with `who`), counted in `count`, and taken as a wrong result.
struct Failures {
  const char* who;
  int count = 0;
  template <class Op>
  auto guarded(Op op) {
    return [this, op] {
      try {
        return bool(op());
      } catch (const std::exception& e) {
        fprintf(stderr, "%s: %s\n", who, e.what());
        ++count;
        return false;
      }
    };
  }
};

/// Prints the Markdown header of print_row()'s table.
inline void print_header() {
  printf("| operation | median ms | worst ms | runs | vs plain replay | wrong |\n");
  printf("| --- | ---: | ---: | ---: | ---: | ---: |\n");
}

/// `runs` timed replays of `trace` from its start to its end, each on a new timeline (the
/// floor of any query over the recording); a replay that ends elsewhere is wrong.
inline Samples plain_replays(const std::string& trace, int runs, Failures& failures) {
  Samples s;
  for (int i = 0; i < runs; ++i)
    s.time(failures.guarded([&] {
      Timeline replay(trace);
      return replay.resume_forward().reason == StopReason::TraceEnd;
    }));
  return s;
}

/// Prints `s` as a Markdown row: what, median ms, worst ms, runs, the median against
/// `reference` ms (when given), wrong results.
inline void print_row(const char* what, const Samples& s, double reference = 0) {
  double worst = s.ms.empty() ? 0 : *std::max_element(s.ms.begin(), s.ms.end());
  std::string ratio =
      reference > 0 ? std::to_string(median(s.ms) / reference).substr(0, 4) + "x" : "";
  printf("| %s | %.0f | %.0f | %zu | %s | %d |\n", what, median(s.ms), worst, s.ms.size(),
         ratio.c_str(), s.wrong);
  fflush(stdout);
}

}  // namespace rwd::bench
