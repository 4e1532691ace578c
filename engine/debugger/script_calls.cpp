// The calls of a Python function over a recording (HitQuery::run_python), and going to a
// query's result by its position (go_to_position). The query's own debugger stops at a
// Python function breakpoint (python_breakpoints.h: the first line of the function's body,
// bound in code objects as their modules are imported), reads the Python stack there, and
// keeps the position: a Python call is found again by its registers and memory, not by a
// count of breakpoint stops (which, for a Python breakpoint, are read watchpoint hits moved
// forward to the line, not one per address).
#include <algorithm>

#include "engine/debugger/hit_history.h"
#include "engine/debugger/script_stacks.h"
#include "engine/errors.h"

namespace rwd {

HitHistory HitQuery::run_python(const HitRequest& req, const QueryProgress& progress) {
  if (!PythonBreakpoints::is_python_function(req.function))
    throw Error("\"" + req.function +
                "\" is not a Python function's qualified name (module.function, as "
                "helper.accumulate)");
  HitHistory h;
  h.what = req.function;
  Run run(*this, req.first_event, req.last_event, progress);
  Timeline& tl = run.timeline();
  Debugger qd(tl);
  BreakpointSpec spec;
  spec.function = req.function;
  spec.condition = req.condition;  // (checked for its syntax here)
  const int id = qd.set_function_breakpoints({spec}).at(0).id;
  ScriptStacks stacks(qd);
  while (auto stop = run.next(qd, h.hits.size())) {
    const DebugStop& ds = *stop;
    if (std::find(ds.breakpoint_ids.begin(), ds.breakpoint_ids.end(), id) ==
        ds.breakpoint_ids.end())
      continue;
    const StopInfo& s = ds.stop;
    RecordedHit hit;
    hit.event = s.event;
    hit.ordinal = run.count();
    hit.tid = s.tid;
    hit.pc = tl.registers(s.tid).rip;
    stacks.new_stop();
    const std::vector<InterpFrame>& frames = stacks.stack(s.tid);
    if (!frames.empty()) {
      const InterpFrame& top = frames[0];
      hit.function = top.function;
      hit.file = top.file;
      hit.line = uint32_t(std::max(top.line, 0));
      for (const InterpVariable& v : top.locals)
        if (v.argument) hit.arguments.emplace_back(v.name, v.value);
      if (frames.size() > 1) {
        hit.caller = frames[1].function;
        hit.caller_file = frames[1].file;
        hit.caller_line = uint32_t(std::max(frames[1].line, 0));
      }
    }
    hit.position = tl.position();
    h.hits.push_back(std::move(hit));
  }
  h.reached_event = run.reached();
  h.complete = run.complete();
  h.truncated = run.truncated();
  return h;
}

DebugStop go_to_position(Debugger& d, const TimelinePosition& p) {
  Timeline& tl = d.timeline();
  DebugStop out;
  out.stop = tl.seek(p.event);
  bool found = out.stop.event == p.event && tl.at_position(p);
  if (!found && out.stop.event == p.event && p.kind == TimelinePosition::Trap) {
    // A breakpoint at the position's instruction (the user's own where there is one), for
    // the run to the stop that is the position.
    CodeSite site = tl.code_site(p.tid, p.regs.rip);
    PositionSplit split(tl, p, site,
                        d.has_breakpoint_site(site) ? std::optional(site) : std::nullopt);
    for (;;) {
      out.stop = tl.resume_forward();
      if (run_ended(out.stop) || out.stop.event != p.event) break;
      if ((found = split.reached(out.stop))) break;
    }
  }
  d.refresh();
  if (!found)
    throw Error("the replay did not find the point of event " + std::to_string(p.event) +
                " again (it stopped at event " + std::to_string(out.stop.event) + ")");
  out.stop.reason = StopReason::Breakpoint;
  out.stop.addr = p.regs.rip;
  return out;
}

}  // namespace rwd
