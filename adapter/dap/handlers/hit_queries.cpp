// Omniscient queries by code location (engine/debugger/hit_history.h): rewind/calls lists
// every call of a function with its arguments, caller and return value; rewind/logAll a
// logpoint's message at every hit over the whole recording; neither moves the session, and
// rewind/seek's `call` and `logHit` go to one of their results.
#include "adapter/dap/handlers/dap_handlers.h"
#include "adapter/dap/handlers/query_progress.h"

namespace rwd::handlers {

using nlohmann::json;

namespace {

bool same_request(const HitRequest& a, const HitRequest& b) {
  return a.function == b.function && a.file == b.file && a.line == b.line &&
         a.condition == b.condition && a.message == b.message && a.first_event == b.first_event &&
         a.last_event == b.last_event;
}

/// `slot`'s answer to `req`: the one kept when it was asked last, else a new query's.
const HitHistory& answer(DapContext& c, DapRequest& r, std::optional<HitHistory>& slot,
                         HitRequest& asked, const HitRequest& req, const std::string& title) {
  c.debugger();  // (launched or attached)
  if (!slot || !same_request(asked, req)) {
    slot.reset();
    HitQuery query(c.trace_dir);
    HitHistory h =
        run_query(c, query, c.running_hit_query, title, message_seq(r.message).value_or(-1),
                  [&](auto progress) { return query.run(req, progress); });
    asked = req;
    slot = std::move(h);
  }
  return *slot;
}

/// The parts of a hit that calls and log lines share.
json hit_json(DapContext& c, const RecordedHit& hit, size_t index) {
  json j = {{"index", index},
            {"event", hit.event},
            {"threadId", hit.tid},
            {"pc", hex(hit.pc)},
            {"function", hit.function}};
  if (!hit.file.empty()) {
    j["source"] = c.source(hit.file);
    j["line"] = c.line_out(hit.line);
  }
  return j;
}

void finish(DapRequest& r, std::optional<HitHistory>& slot, json body) {
  const HitHistory& h = *slot;
  body["complete"] = h.complete;
  body["truncated"] = h.truncated;
  body["reachedEvent"] = h.reached_event;
  r.respond(body);
  if (!h.complete) slot.reset();  // asked again, it runs again
}

/// Checks that `index` names a result of `slot` (the last answer of `request`).
const RecordedHit& result(const std::optional<HitHistory>& slot, int64_t index, const char* what,
                          const char* request) {
  if (!slot || index < 0 || size_t(index) >= slot->hits.size())
    throw RequestError(
        std::string(what) + " " + std::to_string(index) + " is not in the last " + request +
        " answer" +
        (slot ? " (" + std::to_string(slot->hits.size()) + ")" : std::string(" (none was made)")));
  return slot->hits[size_t(index)];
}

}  // namespace

void calls(DapContext& c, const dap::CallsArguments& a, DapRequest& r) {
  HitRequest req;
  req.function = a.function;
  req.condition = a.condition;
  std::tie(req.first_event, req.last_event) = query_events(c, a);
  const HitHistory& h = answer(c, r, c.calls, c.calls_request, req, "Calls of " + a.function);
  json out = json::array();
  for (size_t index : page_indices(a, h.hits.size())) {
    const RecordedHit& hit = h.hits[index];
    json j = hit_json(c, hit, index);
    json args = json::array();
    for (const auto& [name, value] : hit.arguments)
      args.push_back({{"name", name}, {"value", value}});
    j["arguments"] = args;
    json caller = {{"function", hit.caller}};
    if (!hit.caller_file.empty()) {
      caller["source"] = c.source(hit.caller_file);
      caller["line"] = c.line_out(hit.caller_line);
    }
    j["caller"] = caller;
    if (hit.return_known) {  // (false: a Python call no watch was free for, an R 4.4 one)
      j["returned"] = hit.returned;
      if (hit.returned) j["returnValue"] = hit.return_value;
    }
    out.push_back(j);
  }
  finish(r, c.calls, {{"function", a.function}, {"totalCalls", h.hits.size()}, {"calls", out}});
}

void log_all(DapContext& c, const dap::LogAllArguments& a, DapRequest& r) {
  HitRequest req;
  req.function = a.function;
  if (a.source) {
    if (a.source->path.empty()) throw RequestError("rewind/logAll needs source.path");
    req.file = c.source_map.to_built(a.source->path);
    req.line = c.line_in(a.line);
  }
  req.message = a.log_message;
  req.condition = a.condition;
  std::tie(req.first_event, req.last_event) = query_events(c, a);
  const HitHistory& h = answer(c, r, c.log_hits, c.log_request, req, "Logpoint over the recording");
  json out = json::array();
  for (size_t index : page_indices(a, h.hits.size())) {
    json j = hit_json(c, h.hits[index], index);
    j["message"] = h.hits[index].message;
    out.push_back(j);
  }
  finish(r, c.log_hits, {{"location", h.what}, {"totalHits", h.hits.size()}, {"hits", out}});
}

void seek_hit(DapContext& c, const dap::SeekArguments& a, DapRequest& r) {
  Debugger& d = c.debugger();
  bool call = a.call.has_value();
  std::optional<HitHistory>& slot = call ? c.calls : c.log_hits;
  const RecordedHit& found = call ? result(slot, *a.call, "call", "rewind/calls")
                                  : result(slot, *a.log_hit, "hit", "rewind/logAll");
  const HitHistory h = *slot;  // kept while the session moves
  const RecordedHit hit = found;
  std::string say = call ? "call " + std::to_string(*a.call) + " of " + h.what
                         : "hit " + std::to_string(*a.log_hit) + ": " + hit.message;
  go_to_result(
      c, r, hit.event, [&] { return go_to_hit(d, h, hit); },
      say + " at event " + std::to_string(hit.event));
}

}  // namespace rwd::handlers
