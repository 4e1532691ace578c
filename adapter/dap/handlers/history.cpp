// Omniscient queries (engine/debugger/value_history.h): rewind/history lists every change of
// a value over the recording without moving the session; rewind/seek's `change` goes to one.
#include "adapter/dap/handlers/dap_handlers.h"
#include "adapter/dap/handlers/query_progress.h"
#include "engine/symbols/value_diff.h"

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
  if (!ch.member.empty()) j["member"] = ch.member;
  if (!ch.file.empty()) {
    j["source"] = c.source(ch.file);
    j["line"] = c.line_out(ch.line);
  }
  return j;
}

}  // namespace

void history(DapContext& c, const dap::HistoryArguments& a, DapRequest& r) {
  c.debugger();  // (launched or attached)
  FrameRef ref = c.frame(a.frame_id);
  const PythonReader* python = nullptr;
  const RReader* r_reader = nullptr;
  if (ref.interp >= 0) {
    const Interpreter* in = c.scripts->interpreter(ref.tid);
    python = in ? in->python() : nullptr;
    r_reader = in ? in->r() : nullptr;
    if (!python && !r_reader)
      throw RequestError("the interpreter of the frame of \"" + a.expression + "\" is gone");
  }
  HistoryRequest req;
  req.tid = ref.tid;
  req.frame = ref.frame;
  req.expression = a.expression;
  std::tie(req.first_event, req.last_event) = query_events(c, a);
  // The same query, asked at the same stop, is served from its answer (its pages); a new
  // one runs on a second replay. At another stop the expression may name another object (a
  // local of another call), so it runs again.
  if (!c.history || !same_query(c.history_request, req) || c.history_stop != c.stop_count ||
      c.history_interp != ref.interp) {
    c.history.reset();
    HistoryQuery query(c.trace_dir);
    ValueHistory h = run_query(c, query, c.running_query, "History of " + req.expression,
                               message_seq(r.message).value_or(-1), [&](auto progress) {
                                 if (ref.interp < 0) return query.run(c.debugger(), req, progress);
                                 const InterpFrame* f = c.interp_frame(ref);
                                 if (!f)
                                   throw RequestError("the script frame of the query is gone");
                                 ScriptHistoryRequest script{req.tid, f->address, req.expression,
                                                             req.first_event, req.last_event};
                                 if (r_reader)
                                   return query.run_r(c.debugger(), *r_reader, script, progress);
                                 return query.run_python(c.debugger(), *python, script, progress);
                               });
    c.history_request = req;
    c.history_stop = c.stop_count;
    c.history_interp = ref.interp;
    c.history = std::move(h);
  }
  const ValueHistory& h = *c.history;
  size_t n = h.changes.size();
  json changes = json::array();
  for (size_t index : page_indices(a, n))
    changes.push_back(change_json(c, h.changes[index], index));
  json body = {
      {"expression", a.expression}, {"type", h.watched.type},   {"address", hex(h.watched.addr)},
      {"size", h.watched.len},      {"processId", h.pid},       {"totalChanges", n},
      {"complete", h.complete},     {"truncated", h.truncated}, {"reachedEvent", h.reached_event},
      {"changes", changes}};
  if (!h.frame_function.empty()) body["frameFunction"] = h.frame_function;
  r.respond(body);
  // A query that was interrupted is not kept: asking again runs it again.
  if (!h.complete) c.history.reset();
}

namespace {

/// rewind/previousChange and rewind/nextChange for local `a.expression` of Python or R frame
/// `ref` (step_to_python_change, step_to_r_change): within the call that frame runs.
void step_to_script_change(DapContext& c, const dap::EvaluateArguments& a, const FrameRef& ref,
                           Direction dir, DapRequest& r) {
  Debugger& d = c.debugger();
  const Interpreter* in = c.scripts->interpreter(ref.tid);
  const PythonReader* python = in ? in->python() : nullptr;
  const RReader* r_reader = in ? in->r() : nullptr;
  if (!python && !r_reader)
    throw RequestError("the interpreter of the frame of \"" + a.expression + "\" is gone");
  const InterpFrame* f = c.interp_frame(ref);
  if (!f) throw RequestError("the script frame of " + r.command() + " is gone");
  uint64_t frame = f->address;
  std::string function = f->function;
  {
    // What cannot be followed is refused before the session moves.
    InterpMemory mem(d.target(ref.tid));
    if (python)
      python->local_slot(mem, frame, a.expression);
    else
      r_reader->local_binding(mem, frame, a.expression, true);
  }
  r.respond();
  c.out.event("continued",
              {{"threadId", c.timeline->current().tid}, {"allThreadsContinued", true}});
  ScriptChangeStop s;
  s.stop = c.running([&] {
    s = python ? step_to_python_change(d, *python, ref.tid, frame, a.expression, dir)
               : step_to_r_change(d, *r_reader, ref.tid, frame, a.expression, dir);
    return s.stop;
  });
  if (s.found) {
    c.out.output("console", "rewind: " + a.expression + " = " + s.value + " (event " +
                                std::to_string(s.stop.stop.event) + ")\n");
    s.stop.stop.reason = StopReason::Seek;
  } else if (s.stop.stop.reason != StopReason::Interrupted) {
    c.out.output("console", "rewind: " + a.expression + " does not change " +
                                (dir == Direction::Forward ? "after" : "before") +
                                " this point in this call of " + function + "\n");
    s.stop.stop.reason = StopReason::Seek;
  }
  c.stopped(s.stop, "goto", dir);
}

}  // namespace

void step_to_change(DapContext& c, const dap::EvaluateArguments& a, DapRequest& r) {
  Debugger& d = c.debugger();
  FrameRef ref = c.frame(a.frame_id);
  Direction dir = r.command() == "rewind/previousChange" ? Direction::Backward : Direction::Forward;
  if (ref.interp >= 0) return step_to_script_change(c, a, ref, dir, r);
  WatchInfo w = d.watchable(ref.tid, ref.frame, a.expression);
  r.respond();
  c.out.event("continued",
              {{"threadId", c.timeline->current().tid}, {"allThreadsContinued", true}});
  DebugStop s = c.running([&] { return step_to_change(d, w, ref.tid, dir); });
  if (s.stop.reason == StopReason::Watchpoint) {
    ChangeText text =
        describe_change(w.value_type, s.stop.old_value, s.stop.new_value, d.target(s.stop.tid));
    c.out.output("console", "rewind: " + changed_name(a.expression, text.member) + ": " +
                                text.old_value + " → " + text.new_value + " (event " +
                                std::to_string(s.stop.event) + ")\n");
    s.stop.reason = StopReason::Seek;
  } else if (s.stop.reason == StopReason::TraceEnd || s.stop.reason == StopReason::TraceStart) {
    c.out.output("console", "rewind: " + a.expression + " does not change " +
                                (dir == Direction::Forward ? "after" : "before") +
                                " this point in the recording\n");
  }
  c.stopped(s, "goto", dir);
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
  go_to_result(
      c, r, ch.event, [&] { return go_to_change(d, h, ch); },
      changed_name(c.history_request.expression, ch.member) + " = " + ch.new_value + " (was " +
          ch.old_value + "), change " + std::to_string(index) + " at event " +
          std::to_string(ch.event));
}

}  // namespace rwd::handlers
