// The hits of script code over a recording (HitQuery::run_script): every call of a Python or
// R function and every hit of a logpoint on a line of a .py or .R file, and going to a
// query's result by its position (go_to_position). The query's own debugger stops at a
// script breakpoint (python_breakpoints.h, r_breakpoints.h: a function's at the first line of
// its body, bound in the code as the interpreter loads it), reads the script stack there,
// and keeps the position: a script hit is found again by its registers and memory, not by
// a count of breakpoint stops (which, for a script breakpoint, are watchpoint hits moved
// forward to the line, not one per address). A Python call's return is seen by a watchpoint
// on its thread's current-frame word, an R call's at R's Rf_endcontext (RReturns).
#include <algorithm>
#include <optional>
#include <string>

#include "engine/debugger/history_support.h"
#include "engine/debugger/hit_history.h"
#include "engine/debugger/script_stacks.h"
#include "engine/errors.h"
#include "engine/interp/python/python_objects.h"
#include "engine/interp/script_condition.h"

namespace rwd {

namespace {

/// A Python call waiting for its return: its task, the word its thread's current frame is
/// kept in, its frame and its caller's, and the hit it is.
struct PendingReturn {
  pid_t tid = 0;
  uint64_t word = 0, frame = 0, caller = 0;
  size_t hit = 0;
};

/// Follows the returns of the R calls a calls query finds: while one is pending, a
/// breakpoint of the query's on Rf_endcontext, which R_execClosure calls as a call's body
/// has ended, its value in the context (RReader::returned_value).
class RReturns {
 public:
  RReturns(Debugger& qd, std::vector<RecordedHit>& hits) : qd_(qd), hits_(hits) {}
  ~RReturns() {
    if (end_) qd_.stop_reporting(end_);
  }
  RReturns(const RReturns&) = delete;
  RReturns& operator=(const RReturns&) = delete;

  /// At hit `hit`, a call of task `tid` with context `ctx`: follows its return; false when
  /// R's layout or Rf_endcontext is not known here (the return is not followed).
  bool follow(pid_t tid, const RReader& r, InterpMemory& mem, uint64_t ctx, size_t hit) {
    if (!r.return_values_known(mem)) return false;
    // Calls of this thread whose context lies at or below this one's (the C stack grows
    // down) are over: the stack went back past them with no context end (a jump).
    end_where(tid, [&](const Pending& p) { return p.ctx <= ctx; });
    uint64_t env = r.call_environment(mem, ctx);  // (read before anything is armed)
    if (!end_) {
      uint64_t at = qd_.modules().function_range(RReader::kEndContext).first;
      if (!at) return false;
      try {
        qd_.report_stops_at(tid, at);
      } catch (const Error&) {
        return false;
      }
      end_ = at;
    }
    pending_.push_back({tid, ctx, env, hit});
    return true;
  }

  /// Reads `s` when it is a stop at Rf_endcontext: the pending call of the context ending
  /// returned (unless it is left by a jump: no value), and those deeper on that thread's
  /// stack were left by a jump.
  void on_stop(const StopInfo& s, ScriptStacks& stacks) {
    if (!end_ || s.reason != StopReason::Breakpoint || s.addr != end_) return;
    uint64_t ctx = qd_.timeline().registers(s.tid).rdi;  // endcontext(RCNTXT* cptr)
    const Interpreter* in = stacks.interpreter(s.tid);
    const RReader* r = in ? in->r() : nullptr;
    InterpMemory mem(qd_.target(s.tid));
    for (const Pending& p : pending_) {
      if (p.tid != s.tid || p.ctx != ctx || !r) continue;
      try {
        if (r->call_environment(mem, ctx) != p.env) continue;  // a later call there
      } catch (const InterpReadError&) {
        continue;
      }
      if (auto value = r->returned_value(mem, ctx)) {
        hits_[p.hit].returned = true;
        hits_[p.hit].return_value = *value;
      }
    }
    end_where(s.tid, [&](const Pending& p) { return p.ctx <= ctx; });
  }

 private:
  struct Pending {
    pid_t tid = 0;
    uint64_t ctx = 0, env = 0;  ///< its context, and the call's environment
    size_t hit = 0;
  };

  /// Forgets task `tid`'s pending calls that `over` selects (their hits say what was seen),
  /// and the breakpoint once none is left.
  template <class Over>
  void end_where(pid_t tid, Over over) {
    std::erase_if(pending_, [&](const Pending& p) { return p.tid == tid && over(p); });
    if (pending_.empty() && end_) {
      qd_.stop_reporting(end_);
      end_ = 0;
    }
  }

  Debugger& qd_;
  std::vector<RecordedHit>& hits_;
  std::vector<Pending> pending_;
  uint64_t end_ = 0;  ///< Rf_endcontext's address while a call is pending
};

}  // namespace

HitHistory HitQuery::run_script(const HitRequest& req, Run& run, Debugger& qd) {
  HitHistory h;
  h.what = req.file.empty() ? req.function : req.file + ":" + std::to_string(req.line);
  Timeline& tl = run.timeline();
  BreakpointSpec spec;
  spec.function = req.function;
  spec.file = req.file;
  spec.line = req.line;
  spec.condition = req.condition;  // (checked for its syntax here; the message is not the
                                   // breakpoint's: a logpoint would not stop)
  std::vector<Breakpoint> bound = req.file.empty() ? qd.set_function_breakpoints({spec})
                                                   : qd.set_source_breakpoints(req.file, {spec});
  if (bound.empty()) throw Error("no breakpoint could be made for " + h.what);
  if (std::string why = Debugger::script_breakpoints_refusal(); !why.empty())
    throw Error(h.what + ": " + why);  // refused, not a recording without hits
  const int id = bound[0].id;
  const bool calls = req.message.empty() && req.file.empty();
  ScriptStacks stacks(qd);
  RReturns r_returns(qd, h.hits);
  std::vector<PendingReturn> pending;
  uint64_t watched_word = 0;  // the current-frame word watched for returns (0: none)
  // A write of the watched word: a frame pushed or left. Where it leaves a pending call's
  // frame for its caller, the call returned (or raised, or yielded).
  auto on_frame_word = [&](const StopInfo& s) {
    uint64_t left = pointer_in(s.old_value), to = pointer_in(s.new_value);
    auto p = std::find_if(pending.rbegin(), pending.rend(), [&](const PendingReturn& r) {
      return r.tid == s.tid && r.word == s.addr && r.frame == left && r.caller == to;
    });
    if (p == pending.rend()) return;
    RecordedHit& hit = h.hits[p->hit];
    const Interpreter* in = stacks.interpreter(s.tid);
    const PythonReader* py = in ? in->python() : nullptr;
    InterpMemory mem(qd.target(s.tid));
    try {
      if (!py) throw InterpReadError("the interpreter is no longer found");
      PythonReader::FrameExit exit = py->frame_exit(mem, left);
      hit.returned = exit.kind == PythonReader::FrameExit::Returned;
      hit.return_known = exit.kind != PythonReader::FrameExit::Yielded;
      if (hit.returned) {
        std::string type;
        hit.return_value = python_repr(mem, py->layout(), exit.object, type);
      }
    } catch (const InterpReadError& e) {
      hit.returned = true;
      hit.return_value = std::string("<unreadable: ") + e.what() + ">";
    }
    // Calls of the same thread made after it are over too (their returns went unseen).
    auto inner = p.base();
    for (auto q = inner; q != pending.end(); ++q)
      if (q->tid == s.tid) h.hits[q->hit].return_known = false;
    pending.erase(std::prev(inner), pending.end());
    if (watched_word && std::none_of(pending.begin(), pending.end(), [&](const PendingReturn& r) {
          return r.word == watched_word;
        })) {
      tl.remove_watchpoint(watched_word, 8, WatchKind::Write);
      watched_word = 0;
    }
  };
  while (auto stop = run.next(qd, h.hits.size())) {
    const DebugStop& ds = *stop;
    if (watched_word && ds.stop.reason == StopReason::Watchpoint && ds.stop.addr == watched_word) {
      on_frame_word(ds.stop);
      continue;
    }
    r_returns.on_stop(ds.stop, stacks);  // (a stop at Rf_endcontext is no hit of `id`)
    if (std::find(ds.breakpoint_ids.begin(), ds.breakpoint_ids.end(), id) ==
        ds.breakpoint_ids.end())
      continue;
    const StopInfo& s = ds.stop;
    RecordedHit hit;
    hit.event = s.event;
    hit.ordinal = run.count();
    hit.tid = s.tid;
    hit.pc = tl.registers(s.tid).rip;
    // The hit's frame with its locals, and its caller's (a whole stack's locals cost a read
    // of each value's object: most of a hit's time).
    const Interpreter* in = stacks.interpreter(s.tid);
    InterpMemory mem(qd.target(s.tid));  // (pages kept for the return's words below)
    std::vector<InterpFrame> frames;
    if (in) frames = in->stack(mem, s.tid, {2, 1});
    // A line's breakpoint knows its line (code at a script's top level has no frame of its
    // own in R); a function's, the frame it stopped in.
    if (const Breakpoint* bp = qd.breakpoint(id); bp && !req.file.empty()) {
      hit.file = bp->file.empty() ? req.file : bp->file;
      hit.line = bp->line ? bp->line : req.line;
    }
    static const std::vector<InterpVariable> kNone;
    const std::vector<InterpVariable>& locals = frames.empty() ? kNone : frames[0].locals;
    if (!frames.empty()) {
      const InterpFrame& top = frames[0];
      hit.function = top.function;
      if (hit.file.empty()) {
        hit.file = top.file;
        hit.line = uint32_t(std::max(top.line, 0));
      }
      if (frames.size() > 1) {
        hit.caller = frames[1].function;
        hit.caller_file = frames[1].file;
        hit.caller_line = uint32_t(std::max(frames[1].line, 0));
      }
    }
    if (!req.message.empty())
      hit.message = script_log_message(req.message, locals);
    else
      for (const InterpVariable& v : locals)
        if (v.argument) hit.arguments.emplace_back(v.name, v.value);
    hit.position = tl.position();
    hit.return_known = false;
    const RReader* r = in ? in->r() : nullptr;
    if (calls && !frames.empty() && r) {
      try {
        hit.return_known = r_returns.follow(s.tid, *r, mem, frames[0].address, h.hits.size());
      } catch (const InterpReadError&) {
      }
    } else if (calls && !frames.empty() && !frames[0].entry) {
      // Its return, where the word is free to watch (see hit_history.h).
      const PythonReader* py = in ? in->python() : nullptr;
      const Breakpoint* bp = qd.breakpoint(id);
      try {
        uint64_t word = py ? py->current_frame_word(mem, s.tid) : 0;
        uint64_t frame = frames[0].address;
        if (word && mem.u64(word) == frame && bp &&
            (word == watched_word || (!watched_word && bp->addrs.size() <= 1 &&
                                      tl.add_watchpoint(word, 8, WatchKind::Write)))) {
          watched_word = word;
          uint64_t caller = mem.u64(frame + uint64_t(py->layout().frame_previous));
          pending.push_back({s.tid, word, frame, caller, h.hits.size()});
          hit.return_known = true;
        }
      } catch (const InterpReadError&) {
      }
    }
    h.hits.push_back(std::move(hit));
  }
  if (watched_word) tl.remove_watchpoint(watched_word, 8, WatchKind::Write);
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
