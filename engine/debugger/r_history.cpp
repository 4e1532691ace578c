// The values of an R local in one call: HistoryQuery::run_r (value_history.h). Three write
// watchpoints on the query's replay (all the slots a debugger has): the binding cell's
// value word (each assignment, and the cell's making; for a local not bound yet at the
// question's point, the environment's frame word until the call makes it), the cloenv word of the
// call's context (each context started at that address, which tells the calls apart), and the
// elements of the vector bound now (changed in place by `x[i] <- v` and by a `for` loop's
// variable), moved to each new vector the local is bound to.
#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "engine/debugger/history_support.h"
#include "engine/debugger/hit_history.h"
#include "engine/debugger/timeline_target.h"
#include "engine/debugger/value_history.h"
#include "engine/os/debug_registers.h"

namespace rwd {

namespace {

/// What an R local shows before its binding.
constexpr const char* kUnbound = "<unbound>";
/// The most instructions stepped from a new local's making (CONS) to its link into the
/// frame (SET_FRAME): defineVar does one just after the other.
constexpr int kMaxBindingSteps = 2000;

/// A write of the binding's value word, before the calls are told apart.
struct BindingWrite {
  ValueChange change;
  size_t call = 0;  ///< how many contexts had started at the call's address before it
};

/// Names the R code running on the stopped thread now (its innermost R function frame):
/// function, file, line. Left empty when it cannot be read.
void describe_r(const RReader& r, InterpMemory& mem, ValueChange& c) {
  try {
    std::vector<InterpFrame> frames = r.stack(mem, 0);
    if (frames.empty()) return;
    c.function = frames[0].function;
    c.file = frames[0].file;
    c.line = uint32_t(std::max(frames[0].line, 0));
  } catch (const InterpReadError&) {
  }
}

/// A write watchpoint moved from one range to another (follow()), taken away when it is
/// given none or this ends: the vector an R binding holds (its elements), or the word that
/// shows its binding.
class MovingWatch {
 public:
  explicit MovingWatch(Timeline& tl) : tl_(tl) {}
  ~MovingWatch() { follow({}); }
  MovingWatch(const MovingWatch&) = delete;
  MovingWatch& operator=(const MovingWatch&) = delete;
  /// Watches `v` (nothing when its len is 0) instead of what it watched. Throws Error when
  /// no watchpoint slot is left.
  void follow(RReader::VectorBytes v) {
    if (v.addr == now_.addr && v.len == now_.len) return;
    if (now_.len) tl_.remove_watchpoint(now_.addr, int(now_.len), WatchKind::Write);
    now_ = {};
    if (!v.len) return;
    if (!tl_.add_watchpoint(v.addr, int(v.len), WatchKind::Write))
      throw Error("cannot follow " + std::to_string(v.len) + " bytes of an R local at " +
                  hex(v.addr) + ": all hardware watchpoint slots are in use (remove a data " +
                  "breakpoint)");
    now_ = v;
  }
  const RReader::VectorBytes& now() const { return now_; }

 private:
  Timeline& tl_;
  RReader::VectorBytes now_;
};

/// Steps task `tid` of `tl` on until environment `env`'s frame holds cell `cell` with its
/// symbol (defineVar links a new local's cell, then names it, a few instructions after its
/// CONS); at most kMaxBindingSteps. The last step's stop, nullopt when it held it already.
std::optional<StopInfo> settle_binding(Timeline& tl, const RReader& r, pid_t tid, uint64_t env,
                                       uint64_t cell) {
  std::optional<StopInfo> last;
  for (int n = 0; n < kMaxBindingSteps; ++n) {
    TimelineTarget target(tl, tid);
    InterpMemory mem(target);
    if (r.binds(mem, env, cell)) break;
    last = tl.step_forward(tid);
    if (last->reason != StopReason::Step) break;
  }
  return last;
}

/// Whether binding `at` (of the closure call of context `ctx`, running) holds the vector
/// whose elements start at `elements`.
bool holds_vector(const RReader& r, InterpMemory& mem, uint64_t ctx,
                  const RReader::LocalBinding& at, uint64_t elements) {
  RReader::VectorBytes v = r.bound_vector(mem, at.cell, kMaxWatchBytes);
  return v.len && v.addr == elements && r.call_running(mem, ctx, at.env) &&
         r.binds(mem, at.env, at.cell);
}

}  // namespace

ValueHistory HistoryQuery::run_r(Debugger& d, const RReader& r, const ScriptHistoryRequest& req,
                                 const QueryProgress& progress) {
  ValueHistory h;
  // The binding at the question's point; a local not bound yet there is found as the call
  // makes it, after that point (cell 0 until then).
  RReader::LocalBinding b;
  {
    InterpMemory mem(d.target(req.tid));
    b = r.local_binding(mem, req.frame, req.name, true);
    try {
      for (const InterpFrame& f : r.stack(mem, 0))
        if (f.address == req.frame) h.frame_function = f.function;
    } catch (const InterpReadError&) {
    }
  }
  const uint64_t frame_word = RReader::env_frame_word(b.env);
  h.watched = {b.cell ? RReader::binding_value_word(b.cell) : 0, 8, "R local", nullptr};
  const WatchInfo call_word{RReader::context_env_word(req.frame), 8, "", nullptr};
  h.pid = TaskProcesses(d.timeline()).pid_of(req.tid);
  TimelinePosition here = d.timeline().position();
  std::optional<CodeSite> here_site = position_site(d.timeline(), here);

  Run run(*this, req.first_event, req.last_event, progress);
  Timeline& tl = run.timeline();
  Debugger qd(tl);
  ScopedWatch call_watch(tl, call_word, false);
  // The binding's value word; before the binding is known, the frame's head (new locals).
  MovingWatch value(tl);
  value.follow({b.cell ? h.watched.addr : frame_word, 8});
  MovingWatch elements(tl);
  PositionSplit split(tl, here, here_site, std::nullopt);
  const uint64_t ctx = req.frame;
  // A write of the elements counts while the binding still holds that vector in the running
  // call; a write of the frame's head, as it links the cell (a local not bound at the
  // question's point). go_to_change counts the same stops on the session's timeline.
  auto holds = [&r, ctx](InterpMemory& mem, const RReader::LocalBinding& at, uint64_t elements) {
    return holds_vector(r, mem, ctx, at, elements);
  };
  uint64_t elements_event = 0;  // the interval elements_ordinal counts in
  uint32_t elements_ordinal = 0;
  size_t calls = 0, calls_before = 0;
  std::vector<BindingWrite> writes;
  // The last write of the cell's value word made while the cell was not bound in a running
  // call: the cell's making (CONS, or the matching of an argument before the call starts),
  // kept until the cell is seen bound in the call's environment (a call starting with it, or
  // any later stop: a new local is linked into the frame just after it is made) or another
  // such write comes. What it bound and the line are taken as it is written. A write made
  // while no call of the environment runs is an argument's matching, or R clearing the
  // bindings of a call that has returned (R_CleanupEnvir: NULL, not a value of the call).
  std::optional<BindingWrite> pending;
  bool pending_in_call = false;  // made while the call ran (a new local's CONS)
  auto bind_pending = [&](InterpMemory& mem, bool call_starts) {
    if (!pending || !b.cell || !r.binds(mem, b.env, b.cell) || call_starts == pending_in_call)
      return;
    BindingWrite w = std::move(*pending);
    pending.reset();
    if (call_starts) {  // an argument: bound as it was made, before the call's context
      try {
        if (mem.u64(RReader::binding_value_word(b.cell)) != pointer_in(w.change.new_bytes)) return;
      } catch (const InterpReadError&) {
        return;
      }
      w.call = calls;
    }
    writes.push_back(std::move(w));
    elements.follow(r.bound_vector(mem, b.cell, kMaxWatchBytes));
  };
  // The write at stop `s`, the `ordinal`-th counted since its event: the value and the R
  // line there.
  auto write_at = [&](InterpMemory& mem, const StopInfo& s, uint32_t ordinal) {
    BindingWrite w;
    w.change.event = s.event;
    w.change.ordinal = ordinal;
    w.change.tid = s.tid;
    w.change.pc = tl.registers(s.tid).rip;
    w.change.new_bytes = s.new_value;
    w.change.new_value = r.binding_value(mem, b.cell);
    describe_r(r, mem, w.change);
    w.call = calls;
    return w;
  };
  // A change written elsewhere than the value word (the elements, or the frame's head).
  auto elsewhere = [&](InterpMemory& mem, const StopInfo& s, int len, uint32_t ordinal) {
    BindingWrite w = write_at(mem, s, ordinal);
    w.change.written_addr = s.addr;
    w.change.written_len = len;
    writes.push_back(std::move(w));
  };
  while (auto stop = run.next(writes.size())) {
    const StopInfo& s = *stop;
    bool after = split.after(s);
    if (s.reason != StopReason::Watchpoint || s.tid != req.tid) continue;
    InterpMemory mem(qd.target(s.tid));
    if (s.addr == call_word.addr) {
      // A context started at the call's address: the call that stood there has ended, and
      // with it what its vector's elements could change (its watch is taken away: they lie
      // among pages R writes all the time).
      // A local made as the last write of the call that ended is bound in it: its making.
      if (pointer_in(s.new_value) != b.env) bind_pending(mem, false);
      ++calls;
      if (!after) calls_before = calls;
      // Past the question's point, the call asked about has ended: no change of it is left.
      if (after && calls > calls_before) break;
      elements.follow({});
      // A call of this environment starts: its arguments are bound already.
      if (pointer_in(s.new_value) == b.env) bind_pending(mem, true);
      continue;
    }
    if (s.event != elements_event) {
      elements_event = s.event;
      elements_ordinal = 0;
    }
    if (!b.cell) {
      // A new local of the call asked about, after its point: this one once it is named.
      if (s.addr != frame_word || !after || !r.call_running(mem, ctx, b.env)) continue;
      uint64_t cell = pointer_in(s.new_value);
      StopInfo linked = s;
      if (std::optional<StopInfo> named = settle_binding(tl, r, s.tid, b.env, cell))
        if (named->reason != StopReason::Step) break;  // (the run ended on the way)
      InterpMemory now(qd.target(s.tid));
      if (!r.binding_named(now, cell, req.name)) continue;
      b.cell = cell;
      h.watched.addr = RReader::binding_value_word(cell);
      elsewhere(now, linked, 8, 1);  // the one write that links that cell
      value.follow({h.watched.addr, 8});
      elements.follow(r.bound_vector(now, b.cell, kMaxWatchBytes));
      continue;
    }
    bind_pending(mem, false);
    if (elements.now().len && s.addr == elements.now().addr) {
      // The vector bound now, changed in place.
      if (holds(mem, b, s.addr)) elsewhere(mem, s, int(elements.now().len), ++elements_ordinal);
      continue;
    }
    if (s.addr != h.watched.addr) continue;
    uint32_t ordinal = run.count();
    if (s.old_value == s.new_value) continue;
    BindingWrite w = write_at(mem, s, ordinal);
    bool running = r.call_running(mem, ctx, b.env);
    if (!running || !r.binds(mem, b.env, b.cell)) {
      pending = std::move(w);
      pending_in_call = running;
      continue;
    }
    writes.push_back(std::move(w));
    elements.follow(r.bound_vector(mem, b.cell, kMaxWatchBytes));
  }
  // A local made by the recording's last write there (its process may be gone: nothing to
  // read then).
  if (pending) try {
      InterpMemory mem(qd.target(req.tid));
      bind_pending(mem, false);
    } catch (const Error&) {
    }
  // The call asked about: its values, from its binding on; a write of an equal value (a new
  // object, or the same number unboxed) is not a change.
  std::string old = kUnbound;
  for (BindingWrite& w : writes) {
    if (w.call != calls_before || w.change.new_value == old) continue;
    w.change.old_value = std::exchange(old, w.change.new_value);
    h.changes.push_back(std::move(w.change));
  }
  h.reached_event = run.reached();
  h.complete = run.complete();
  h.truncated = run.truncated();
  if (!b.cell) return h;  // never bound in that call
  // Going to a change again: the same tests on the session's timeline; a new local is shown
  // once its frame holds it.
  auto reader = std::make_shared<const RReader>(r);  // (the session's may be read again)
  h.counts_elsewhere = [reader, b, ctx, frame_word](Timeline& on, const StopInfo& s) {
    TimelineTarget target(on, s.tid);
    InterpMemory mem(target);
    if (s.addr != frame_word) return holds_vector(*reader, mem, ctx, b, s.addr);
    return pointer_in(s.new_value) == b.cell && reader->call_running(mem, ctx, b.env);
  };
  h.settle = [reader, b](Debugger& on, const StopInfo& at) {
    std::optional<StopInfo> there = settle_binding(on.timeline(), *reader, at.tid, b.env, b.cell);
    on.refresh();
    return there;
  };
  return h;
}

namespace {

/// step_to_r_change for local `name` not bound yet in environment `env` of the call of
/// context `ctx`: forwards, to where the call makes it (a write of the frame's head that
/// links a cell so named); backwards there is nothing (it was not bound before).
ScriptChangeStop step_to_r_making(Debugger& d, const RReader& r, pid_t tid, uint64_t ctx,
                                  uint64_t env, const std::string& name, Direction dir) {
  Timeline& tl = d.timeline();
  TimelinePosition here = tl.position();
  ScriptChangeStop out;
  if (dir == Direction::Forward) {
    const WatchInfo frame_word{RReader::env_frame_word(env), 8, "R local", nullptr};
    const WatchInfo call_word{RReader::context_env_word(ctx), 8, "", nullptr};
    std::optional<StopInfo> named;
    uint64_t cell = 0;
    {
      SessionWatch frame_watch(d, frame_word);
      ScopedWatch call_watch(tl, call_word, false);
      CallScan end = scan_call(tl, dir, tid, call_word.addr, out.stop.stop, [&](const StopInfo& s) {
        if (s.addr != frame_word.addr) return false;
        {
          InterpMemory mem(d.target(tid));
          if (!r.call_running(mem, ctx, env)) return false;
        }
        // A new local: named a few instructions on; the scan goes on from there if it is
        // another one.
        cell = pointer_in(s.new_value);
        named = settle_binding(tl, r, tid, env, cell);
        d.refresh();
        if (named && named->reason != StopReason::Step) return false;
        InterpMemory mem(d.target(tid));
        return r.binding_named(mem, cell, name);
      });
      if (end == CallScan::Interrupted) {
        d.refresh();
        return out;
      }
      out.found = end == CallScan::Found;
    }
    d.refresh();
    if (out.found) {
      if (named) out.stop.stop = *named;
      InterpMemory mem(d.target(tid));
      out.value = r.binding_value(mem, cell);
      return out;
    }
  }
  // Not made that way in this call: back to where the question was asked.
  out.stop = go_to_position(d, here);
  return out;
}

}  // namespace

ScriptChangeStop step_to_r_change(Debugger& d, const RReader& r, pid_t tid, uint64_t ctx,
                                  const std::string& name, Direction dir) {
  Timeline& tl = d.timeline();
  RReader::LocalBinding b;
  RReader::VectorBytes vector;
  {
    InterpMemory mem(d.target(tid));
    b = r.local_binding(mem, ctx, name, true);
    if (b.cell) vector = r.bound_vector(mem, b.cell, kMaxWatchBytes);
  }
  if (!b.cell) return step_to_r_making(d, r, tid, ctx, b.env, name, dir);
  const WatchInfo value_word{RReader::binding_value_word(b.cell), 8, "R local", nullptr};
  const WatchInfo call_word{RReader::context_env_word(ctx), 8, "", nullptr};
  TimelinePosition here = tl.position();
  ScriptChangeStop out;
  {
    SessionWatch value_watch(d, value_word);
    ScopedWatch call_watch(tl, call_word, false);
    // The vector bound now changes in place until the binding changes (a stop either way).
    MovingWatch elements(tl);
    elements.follow(vector);
    // A context started at the call's address (its cloenv word written): forwards, the call
    // has ended and another stands there; backwards, the call asked about begins here.
    CallScan end = scan_call(tl, dir, tid, call_word.addr, out.stop.stop, [&](const StopInfo& s) {
      if (s.addr != value_word.addr && !(vector.len && s.addr == vector.addr)) return false;
      InterpMemory mem(d.target(tid));
      if (!r.call_running(mem, ctx, b.env)) return false;
      // The elements count while the binding holds that vector (not as a new value is
      // computed into them before it is bound).
      if (s.addr != value_word.addr && r.bound_vector(mem, b.cell, kMaxWatchBytes).addr != s.addr)
        return false;
      // Going back, a write of the binding before it is linked into the frame is its making
      // (the CONS of a new local: the last write there before it was bound).
      return r.binds(mem, b.env, b.cell) ||
             (dir == Direction::Backward && s.addr == value_word.addr);
    });
    if (end == CallScan::Interrupted) {
      d.refresh();
      return out;
    }
    out.found = end == CallScan::Found;
  }
  d.refresh();
  if (out.found) {
    // The making of a new local: on to where the frame holds it (SET_FRAME, a few
    // instructions on), so that the Variables view shows it and the next move finds it.
    std::optional<StopInfo> named = settle_binding(tl, r, tid, b.env, b.cell);
    d.refresh();
    bool made = named.has_value();
    if (made) out.stop.stop = *named;
    // Back where the move started (it stood just after that making): nothing before it.
    out.found = !(made && tl.at_position(here));
  }
  if (out.found) {
    InterpMemory mem(d.target(tid));
    out.value = r.binding_value(mem, b.cell);
    return out;
  }
  // No change that way in this call: back to where the question was asked.
  out.stop = go_to_position(d, here);
  return out;
}

}  // namespace rwd
