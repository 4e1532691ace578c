// Omniscient queries (engine/debugger/value_history.h): rewind/history lists every change of
// a value over the recording without moving the session; rewind/seek's `change` goes to one.
#include "adapter/dap/handlers/dap_handlers.h"

namespace rwd::handlers {

using nlohmann::json;

namespace {

/// Whether two requests ask the same query (a page of an answer already made).
bool same_query(const HistoryRequest& a, const HistoryRequest& b) {
  return a.tid == b.tid && a.frame == b.frame && a.expression == b.expression &&
         a.first_event == b.first_event && a.last_event == b.last_event;
}

json change_json(DapContext& c, const ValueChange& ch, size_t index) {
  json j = {{"index", index},         {"event", ch.event},        {"threadId", ch.tid},
            {"pc", hex(ch.pc)},       {"oldValue", ch.old_value}, {"newValue", ch.new_value},
            {"function", ch.function}};
  if (!ch.file.empty()) {
    j["source"] = c.source(ch.file);
    j["line"] = c.line_out(ch.line);
  }
  return j;
}

/// Runs `req` so that cancel (naming request `seq`) and disconnect can interrupt it, with
/// progress events when the client takes them (DAP progressStart/Update/End).
ValueHistory run_query(DapContext& c, const HistoryRequest& req, int64_t seq) {
  HistoryQuery query(c.trace_dir);
  std::string progress_id = "rewind-history-" + std::to_string(seq);
  uint64_t total = c.timeline->event_count();
  if (c.client.progress)
    c.out.event("progressStart", {{"progressId", progress_id},
                                  {"title", "History of " + req.expression},
                                  {"requestId", seq},
                                  {"cancellable", true},
                                  {"percentage", 0}});
  auto progress = [&](uint64_t event, size_t changes) {
    if (!c.client.progress || total == 0) return;
    c.out.event("progressUpdate", {{"progressId", progress_id},
                                   {"message", std::to_string(changes) + " changes up to event " +
                                                   std::to_string(event)},
                                   {"percentage", std::min<uint64_t>(100, event * 100 / total)}});
  };
  c.running_query_seq = seq;
  c.running_query = &query;
  struct Done {
    DapContext& c;
    bool progress;
    std::string id;
    ~Done() {
      c.running_query = nullptr;
      c.running_query_seq = -1;
      if (progress) c.out.event("progressEnd", {{"progressId", id}});
    }
  } done{c, c.client.progress, progress_id};
  return query.run(c.debugger(), req, progress);
}

}  // namespace

void history(DapContext& c, const dap::HistoryArguments& a, DapRequest& r) {
  c.debugger();  // (launched or attached)
  FrameRef ref = c.frame(a.frame_id);
  if (ref.interp >= 0)
    throw RequestError("rewind/history follows C and C++ lvalues; \"" + a.expression +
                       "\" names a script variable");
  HistoryRequest req;
  req.tid = ref.tid;
  req.frame = ref.frame;
  req.expression = a.expression;
  uint64_t count = c.timeline->event_count();
  auto event_arg = [&](std::optional<int64_t> e, const char* name) -> uint64_t {
    if (!e) return 0;
    if (*e < 1 || uint64_t(*e) > count)
      throw RequestError(std::string(name) + " " + std::to_string(*e) +
                         " is not in this trace (events 1 to " + std::to_string(count) + ")");
    return uint64_t(*e);
  };
  req.first_event = std::max<uint64_t>(1, event_arg(a.start_event, "startEvent"));
  req.last_event = event_arg(a.end_event, "endEvent");
  if (req.last_event && req.last_event < req.first_event)
    throw RequestError("endEvent comes before startEvent");
  // The same query's answer serves its pages; a new one runs on a second replay.
  if (!c.history || !same_query(c.history_request, req)) {
    c.history.reset();
    ValueHistory h = run_query(c, req, message_seq(r.message).value_or(-1));
    c.history_request = req;
    c.history = std::move(h);
  }
  const ValueHistory& h = *c.history;
  size_t n = h.changes.size();
  json changes = json::array();
  for (size_t i = size_t(a.start); i < n && changes.size() < size_t(a.count); ++i) {
    size_t index = a.order == "newest" ? n - 1 - i : i;
    changes.push_back(change_json(c, h.changes[index], index));
  }
  json body = {{"expression", a.expression},
               {"type", h.watched.type},
               {"address", hex(h.watched.addr)},
               {"size", h.watched.len},
               {"processId", h.pid},
               {"totalChanges", n},
               {"complete", h.complete},
               {"reachedEvent", h.reached_event},
               {"changes", changes}};
  if (!h.frame_function.empty()) body["frameFunction"] = h.frame_function;
  r.respond(body);
  // A query that was interrupted is not kept: asking again runs it again.
  if (!h.complete) c.history.reset();
}

void seek_change(DapContext& c, int64_t index, DapRequest& r) {
  Debugger& d = c.debugger();
  if (!c.history || index < 0 || size_t(index) >= c.history->changes.size())
    throw RequestError("change " + std::to_string(index) +
                       " is not in the last rewind/history answer" +
                       (c.history ? " (" + std::to_string(c.history->changes.size()) + " changes)"
                                  : std::string(" (none was made)")));
  const ValueHistory h = *c.history;  // (a copy: the stop may not change it, but is safe)
  const ValueChange& ch = h.changes[size_t(index)];
  uint64_t from = c.timeline->current().event;
  c.out.event("continued",
              {{"threadId", c.timeline->current().tid}, {"allThreadsContinued", true}});
  DebugStop s = c.running([&] { return go_to_change(d, h, ch); });
  r.respond(c.when());
  if (c.client.invalidated_event) c.out.event("invalidated", {{"areas", json::array({"all"})}});
  c.out.output("console", "rewind: " + c.history_request.expression + " = " + ch.new_value +
                              " (was " + ch.old_value + "), change " + std::to_string(index) +
                              " at event " + std::to_string(ch.event) + "\n");
  s.stop.reason = StopReason::Seek;
  c.stopped(s, "goto", ch.event < from ? Direction::Backward : Direction::Forward);
}

}  // namespace rwd::handlers
