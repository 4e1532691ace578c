// Running an omniscient query (value_history.h, hit_history.h) for a DAP request: progress
// events while it replays (DAP progressStart, progressUpdate, progressEnd, when the client
// said it supports them), and a cancel naming the request interrupts it (its answer then holds
// what it found so far, with "complete": false).
#pragma once

#include <algorithm>
#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_context.h"
#include "adapter/dap/protocol/dap_arguments.h"

namespace rwd::handlers {

/// The events a query covers: (first, last), last 0 for the end of the recording. Throws
/// RequestError for an event outside the trace or a range that ends before it starts.
inline std::pair<uint64_t, uint64_t> query_events(DapContext& c, const dap::QueryPage& a) {
  uint64_t count = c.timeline->event_count();
  auto event_arg = [&](std::optional<int64_t> e, const char* name) -> uint64_t {
    if (!e) return 0;
    if (*e < 1 || uint64_t(*e) > count)
      throw RequestError(std::string(name) + " " + std::to_string(*e) +
                         " is not in this trace (events 1 to " + std::to_string(count) + ")");
    return uint64_t(*e);
  };
  uint64_t first = std::max<uint64_t>(1, event_arg(a.start_event, "startEvent"));
  uint64_t last = event_arg(a.end_event, "endEvent");
  if (last && last < first) throw RequestError("endEvent comes before startEvent");
  return {first, last};
}

/// The indexes (in an answer of `n` entries, oldest first) of the page `a` asks for.
inline std::vector<size_t> page_indices(const dap::QueryPage& a, size_t n) {
  std::vector<size_t> out;
  for (size_t i = size_t(a.start); i < n && out.size() < size_t(a.count); ++i)
    out.push_back(a.order == "newest" ? n - 1 - i : i);
  return out;
}

/// Moves the session to a query's result at event `event` with `go` (go_to_change,
/// go_to_hit), as rewind/seek does: continued, the response (where it stands), `say` on the
/// console, then the stop (reason "goto", backwards when the result lies before).
template <class Go>
void go_to_result(DapContext& c, DapRequest& r, uint64_t event, Go go, const std::string& say) {
  uint64_t from = c.timeline->current().event;
  c.out.event("continued",
              {{"threadId", c.timeline->current().tid}, {"allThreadsContinued", true}});
  DebugStop s = c.running(go);
  r.respond(c.when());
  if (c.client.invalidated_event)
    c.out.event("invalidated", {{"areas", nlohmann::json::array({"all"})}});
  c.out.output("console", "rewind: " + say + "\n");
  s.stop.reason = StopReason::Seek;
  s.breakpoint_ids.clear();
  c.stopped(s, "goto", event < from ? Direction::Backward : Direction::Forward);
}

/// Runs `run(progress)`, where `query` (registered in `slot` meanwhile, for cancel and
/// disconnect) answers the request with seq `seq`; `title` names it in the progress events.
/// Returns what `run` returns.
template <class Query, class Run>
auto run_query(DapContext& c, Query& query, std::atomic<Query*>& slot, const std::string& title,
               int64_t seq, Run run) {
  std::string id = "rewind-query-" + std::to_string(seq);
  uint64_t total = c.timeline->event_count();
  bool report = c.client.progress;
  // Registered before the client hears of it: a cancel sent on progressStart finds it.
  c.running_query_seq = seq;
  slot = &query;
  if (report)
    c.out.event("progressStart", {{"progressId", id},
                                  {"title", title},
                                  {"requestId", seq},
                                  {"cancellable", true},
                                  {"percentage", 0}});
  auto progress = [&c, &id, total, report](uint64_t event, size_t found) {
    if (!report || total == 0) return;
    c.out.event("progressUpdate",
                {{"progressId", id},
                 {"message", std::to_string(found) + " found up to event " + std::to_string(event)},
                 {"percentage", std::min<uint64_t>(100, event * 100 / total)}});
  };
  struct Done {
    DapContext& c;
    std::atomic<Query*>& slot;
    bool report;
    std::string id;
    ~Done() {
      slot = nullptr;
      c.running_query_seq = -1;
      if (report) c.out.event("progressEnd", {{"progressId", id}});
    }
  } done{c, slot, report, id};
  return run(progress);
}

}  // namespace rwd::handlers
