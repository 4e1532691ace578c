// rewind's own DAP requests (docs/dap.md): the recorded events, jumps to an event,
// checkpoints, and where in the recording the program stands.
#include "adapter/dap/dap_args.h"
#include "adapter/dap/dap_session.h"
#include "engine/trace/event.h"

namespace rwd {

using nlohmann::json;

namespace {
constexpr uint64_t kDefaultEvents = 100;  // rewind/timeline: events around now, by default
constexpr uint64_t kMaxEvents = 10000;
}  // namespace

json DapSession::when_json() {
  StopInfo now = timeline_->current();
  json j = {{"event", now.event}, {"eventCount", timeline_->event_count()}, {"threadId", now.tid}};
  try {
    const auto& stack = debugger_->stack(now.tid);
    if (!stack.empty()) {
      const StackFrame& f = stack.front();
      j["pc"] = hex(f.pc);
      if (!f.function.empty()) j["function"] = f.function;
      if (!f.file.empty()) {
        j["source"] = source_json(f.file);
        j["line"] = line_out(f.line);
      }
    }
  } catch (const Error&) {
    // Where the task stands cannot be read (it is exiting): the event number still holds.
  }
  return j;
}

void DapSession::when(const json& req) {
  debugger();
  respond(req, when_json());
}

void DapSession::timeline_events(const json& req) {
  debugger();
  const json& args = arguments(req);
  if (!events_) events_ = std::make_unique<EventIndex>(trace_dir_);
  uint64_t total = events_->entries().size();
  uint64_t now = timeline_->current().event;
  uint64_t count =
      std::min<uint64_t>(optional_arg<uint64_t>(args, "count", kDefaultEvents), kMaxEvents);
  uint64_t start = optional_arg<uint64_t>(args, "start", now > count / 2 ? now - count / 2 : 1);
  if (start < 1) start = 1;
  json out = json::array();
  for (uint64_t n = start; n < start + count && n <= total; ++n) {
    const EventEntry* e = events_->at(n);
    json j = {{"event", e->number},
              {"threadId", e->tid},
              {"kind", event_kind_name(e->kind)},
              {"description", e->text}};
    if (!e->syscall.empty()) j["syscall"] = e->syscall;
    // A thread switch: the recorder ran another task for the event before (the replay's
    // schedule), so the user sees which thread ran when.
    if (const EventEntry* before = n > 1 ? events_->at(n - 1) : nullptr;
        before && before->tid != e->tid && e->tid != 0)  // the end is no task's
      j["switchedFrom"] = before->tid;
    out.push_back(j);
  }
  respond(req, {{"events", out}, {"currentEvent", now}, {"eventCount", total}});
}

void DapSession::checkpoints(const json& req) {
  debugger();
  const json& args = arguments(req);
  std::string action = optional_arg<std::string>(args, "action", "list");
  if (action == "add") {
    if (!timeline_->add_checkpoint())
      throw RequestError(
          "a checkpoint can be taken only just after an event (rewind/seek there first), and "
          "not while a task is inside a fork or processes share writable memory");
    uint64_t ev = timeline_->current().event;
    user_checkpoints_.push_back(ev);
    respond(req, {{"id", user_checkpoints_.size()}, {"event", ev}});
    return;
  }
  if (action == "restore") {
    int64_t id = required<int64_t>(args, "id");
    if (id < 1 || size_t(id) > user_checkpoints_.size())
      throw RequestError("no checkpoint " + std::to_string(id));
    json seek_req = req;
    seek_req["arguments"] = {{"event", user_checkpoints_[size_t(id) - 1]}};
    seek(seek_req);
    return;
  }
  if (action != "list")
    throw RequestError("unknown action \"" + action + "\": use list, add or restore");
  json user = json::array();
  for (size_t i = 0; i < user_checkpoints_.size(); ++i)
    user.push_back({{"id", i + 1}, {"event", user_checkpoints_[i]}});
  CheckpointStats stats = timeline_->checkpoints();
  respond(req, {{"checkpoints", user}, {"automatic", stats.events}});
}

}  // namespace rwd
