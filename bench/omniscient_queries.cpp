// Benchmark: history queries (engine/debugger/value_history.h, DAP rewind/history) on long
// traces. bench/history_writes.c makes EVENTS traced syscalls (recorded with
// --no-syscall-buffer, each an event) and writes the global `watched` WRITES times, each
// through a call of note(); on its recording this times:
//  - a plain replay of the whole trace on a new timeline (what every query pays at least);
//  - the history of `watched` over the whole recording, checked to hold WRITES changes;
//  - the history of the 4 KiB array `ring` (a wide watch, kept in software with its pages
//    read-only), checked to hold WRITES changes of one element each;
//  - going to the last change found (rewind/seek {change}) on the session's timeline;
//  - the calls of note() over the whole recording (rewind/calls), checked to be WRITES, each
//    with its argument and return value;
//  - reverse-continues with a watchpoint on `watched` from the end (what a user of rr-class
//    tools does instead, one change each), of which the per-change median is multiplied by
//    WRITES for comparison.
// Usage: omniscient_queries [--runs N] [--events N] [--writes N] [--threads N]
//        [--reverse N (reverse-continues timed)]. Prints medians in milliseconds.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench/bench_stats.h"
#include "engine/debugger/hit_history.h"
#include "engine/debugger/value_history.h"

using namespace rwd;
using bench::median;
using bench::print_row;
using bench::Samples;

int main(int argc, char** argv) {
  int runs = 3, threads = 1, reverse = 20;
  long events = 1'000'000, writes = 10'000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!strcmp(argv[i], "--runs"))
      runs = std::max(1, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--events"))
      events = std::max(1L, atol(argv[++i]));
    else if (!strcmp(argv[i], "--writes"))
      writes = std::max(1L, atol(argv[++i]));
    else if (!strcmp(argv[i], "--threads"))
      threads = std::max(1, atoi(argv[++i]));
    else if (!strcmp(argv[i], "--reverse"))
      reverse = std::max(0, atoi(argv[++i]));
  }
  std::string cmd = std::string(HISTORY_WRITES) + " " + std::to_string(events) + " " +
                    std::to_string(writes) + " " + std::to_string(threads);
  bench::RecordedCommand rec(REWIND_BIN, "history", cmd, "--no-syscall-buffer");
  if (!rec.ok) return 1;
  Timeline tl(rec.trace);
  Debugger d(tl);
  printf(
      "history_writes: %ld events, %ld writes, %d thread(s): native %.0f ms, record %.0f ms, "
      "%llu events in the trace\n",
      events, writes, threads, rec.native_ms, rec.record_ms, (unsigned long long)tl.event_count());
  bench::print_header();
  bench::Failures failures{"omniscient_queries"};
  auto guarded = [&](auto op) { return failures.guarded(op); };
  Samples plain = bench::plain_replays(rec.trace, runs, failures);
  print_row("replay of the whole trace (new timeline)", plain);
  double reference = median(plain.ms);

  // The history of `expression` over the whole recording, `runs` times: its last answer,
  // each checked to hold WRITES changes that pass `right`; the row and the cost per change.
  auto history = [&](const char* expression, const char* row, auto right) {
    HistoryRequest req;
    req.tid = tl.current().tid;
    req.expression = expression;
    ValueHistory h;
    Samples query;
    for (int i = 0; i < runs; ++i)
      query.time(guarded([&] {
        HistoryQuery q(rec.trace);
        h = q.run(d, req);
        return h.complete && long(h.changes.size()) == writes &&
               std::all_of(h.changes.begin(), h.changes.end(), right);
      }));
    print_row(row, query, reference);
    printf(
        "(%zu changes found; %.1f us per change over the plain replay)\n", h.changes.size(),
        h.changes.empty() ? 0.0 : (median(query.ms) - reference) * 1000 / double(h.changes.size()));
    return std::make_pair(h, median(query.ms));
  };
  auto [last, query_ms] = history("watched", "history of watched, whole recording",
                                  [](const ValueChange& c) { return c.member.empty(); });
  history("ring", "history of ring (4 KiB array), whole recording", [](const ValueChange& c) {
    return c.member == "[" + std::to_string(std::stol(c.new_value) % 512) + "]";
  });

  Samples go;
  for (int i = 0; i < runs && !last.changes.empty(); ++i)
    go.time(guarded([&] {
      tl.seek(1);
      d.refresh();
      DebugStop s = go_to_change(d, last, last.changes.back());
      return s.stop.new_value == last.changes.back().new_bytes;
    }));
  print_row("go to the last change (from the start)", go);

  Samples calls;
  HitHistory found;
  for (int i = 0; i < runs; ++i)
    calls.time(guarded([&] {
      HitQuery q(rec.trace);
      HitRequest creq;
      creq.function = "note";
      found = q.run(creq);
      return found.complete && long(found.hits.size()) == writes &&
             std::all_of(found.hits.begin(), found.hits.end(), [](const RecordedHit& h) {
               return h.returned && h.arguments.size() == 1 &&
                      h.return_value == std::to_string(2 * std::stol(h.arguments[0].second));
             });
    }));
  print_row("calls of note, whole recording", calls, reference);
  printf(
      "(%zu calls found; %.1f us per call over the plain replay)\n", found.hits.size(),
      found.hits.empty() ? 0.0 : (median(calls.ms) - reference) * 1000 / double(found.hits.size()));

  Samples back;
  if (reverse > 0 && !last.changes.empty()) {
    WatchInfo w = last.watched;
    d.watch(w, WatchKind::Write);
    tl.seek(tl.event_count());
    tl.resume_forward();  // the end
    for (int i = 0; i < reverse; ++i)
      back.time(guarded([&] { return tl.resume_backward().reason == StopReason::Watchpoint; }));
    d.unwatch(w, WatchKind::Write);
    print_row("one reverse-continue to the previous change", back);
    printf("(%ld reverse-continues, one per change: about %.0f ms, %.1fx the history query)\n",
           writes, median(back.ms) * double(writes),
           median(back.ms) * double(writes) / std::max(1.0, query_ms));
  }
  if (failures.count) fprintf(stderr, "omniscient_queries: %d runs failed\n", failures.count);
  return failures.count ? 1 : 0;
}
