// rewind's own DAP requests (docs/dap.md): the recorded events, checkpoints, and where in the
// recording the program stands (rewind/seek is in execution.cpp).
#include "adapter/dap/handlers/dap_handlers.h"
#include "engine/trace/event.h"

namespace rwd::handlers {

using nlohmann::json;

namespace {
constexpr uint64_t kDefaultEvents = 100;  // rewind/timeline: events around now, by default
constexpr uint64_t kMaxEvents = 10000;
}  // namespace

void when(DapContext& c, const dap::NoArguments&, DapRequest& r) {
  c.debugger();
  r.respond(c.when());
}

void timeline_events(DapContext& c, const dap::TimelineArguments& a, DapRequest& r) {
  c.debugger();
  EventIndex& events = c.event_index();
  uint64_t total = events.entries().size();
  uint64_t now = c.timeline->current().event;
  uint64_t count = std::min<uint64_t>(a.count.value_or(kDefaultEvents), kMaxEvents);
  uint64_t start = std::max<uint64_t>(a.start.value_or(now > count / 2 ? now - count / 2 : 1), 1);
  json out = json::array();
  for (uint64_t n = start; n < start + count && n <= total; ++n) {
    const EventEntry* e = events.at(n);
    json j = {{"event", e->number},
              {"threadId", e->tid},
              {"kind", event_kind_name(e->kind)},
              {"description", e->text}};
    if (!e->syscall.empty()) j["syscall"] = e->syscall;
    if (e->origin != EventOrigin::Program) j["origin"] = event_origin_name(e->origin);
    // A thread switch: the recorder ran another task for the event before (the replay's
    // schedule), so the user sees which thread ran when.
    if (const EventEntry* before = n > 1 ? events.at(n - 1) : nullptr;
        before && before->tid != e->tid && e->tid != 0)  // the end is no task's
      j["switchedFrom"] = before->tid;
    out.push_back(j);
  }
  r.respond({{"events", out}, {"currentEvent", now}, {"eventCount", total}});
}

void checkpoints(DapContext& c, const dap::CheckpointsArguments& a, DapRequest& r) {
  c.debugger();
  if (a.action == "add") {
    if (!c.timeline->add_checkpoint())
      throw RequestError(
          "a checkpoint can be taken only just after an event (rewind/seek there first), and "
          "not while a task is inside a fork or processes share writable memory");
    uint64_t ev = c.timeline->current().event;
    c.user_checkpoints.push_back(ev);
    r.respond({{"id", c.user_checkpoints.size()}, {"event", ev}});
    return;
  }
  if (a.action == "restore") {
    if (!a.id) throw RequestError("missing argument \"id\"");
    if (*a.id < 1 || size_t(*a.id) > c.user_checkpoints.size())
      throw RequestError("no checkpoint " + std::to_string(*a.id));
    dap::SeekArguments to;
    to.event = int64_t(c.user_checkpoints[size_t(*a.id) - 1]);
    seek(c, to, r);
    return;
  }
  if (a.action != "list")
    throw RequestError("unknown action \"" + a.action + "\": use list, add or restore");
  json user = json::array();
  for (size_t i = 0; i < c.user_checkpoints.size(); ++i)
    user.push_back({{"id", i + 1}, {"event", c.user_checkpoints[i]}});
  CheckpointStats stats = c.timeline->checkpoints();
  r.respond({{"checkpoints", user}, {"automatic", stats.events}});
}

}  // namespace rwd::handlers
