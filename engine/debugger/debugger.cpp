#include "engine/debugger/debugger.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "engine/debugger/python_stepper.h"
#include "engine/debugger/r_stepper.h"
#include "engine/interp/script_condition.h"
#include "engine/os/debug_registers.h"

namespace rwd {

Debugger::Debugger(Timeline& timeline)
    : tl_(timeline),
      refs_(timeline),
      steps_(timeline, modules_),
      stepper_(timeline, modules_, refs_, steps_,
               [this](pid_t tid, uint64_t addr) { return stops_step(tid, addr); }),
      locator_(timeline, modules_),
      python_(timeline, locator_, refs_),
      exceptions_(timeline, locator_, refs_),
      r_errors_(timeline, modules_, refs_),
      r_breakpoints_(timeline, modules_, refs_),
      exports_(std::filesystem::path(timeline.executable()).parent_path().string()) {
  moved();
}

bool SignalStops::stops(int signo, bool is_fatal) const {
  return all || (fatal && is_fatal) ||
         std::find(signals.begin(), signals.end(), signo) != signals.end();
}

void Debugger::moved() {
  views_.clear();
  pid_t tid = tl_.current().tid;
  std::vector<TaskInfo> tasks = tl_.tasks();
  if (std::none_of(tasks.begin(), tasks.end(), [&](const TaskInfo& t) { return t.tid == tid; }))
    return;  // after the last task exited (a seek past exit_group): nothing to read
  TimelineTarget t(tl_, tid);
  modules_.refresh(t);
  std::vector<std::pair<std::string, uint64_t>> loaded;
  for (const auto& m : modules_.modules()) {
    loaded.emplace_back(m->file(), m->lo());
    auto known = std::find_if(seen_.begin(), seen_.end(),
                              [&](const auto& s) { return s->file() == m->file(); });
    if (known == seen_.end())
      seen_.push_back(m);
    else
      *known = m;
  }
  if (loaded != loaded_) {
    // Other code here (a library mapped or unmapped, another process's program): bind the
    // breakpoints in it too.
    loaded_ = std::move(loaded);
    for (int id : rebind_breakpoints())
      if (std::find(rebound_.begin(), rebound_.end(), id) == rebound_.end()) rebound_.push_back(id);
  }
}

std::vector<Breakpoint> Debugger::take_rebound_breakpoints() {
  std::vector<Breakpoint> out;
  std::vector<int> scripts = python_.take_rebound();
  for (int id : r_breakpoints_.take_rebound()) scripts.push_back(id);
  for (int id : scripts)
    if (std::find(rebound_.begin(), rebound_.end(), id) == rebound_.end()) rebound_.push_back(id);
  for (int id : rebound_)
    if (const Breakpoint* bp = breakpoint(id)) out.push_back(*bp);
  rebound_.clear();
  return out;
}

const Breakpoint* Debugger::breakpoint(int id) const {
  auto it = breakpoints_.find(id);
  if (it != breakpoints_.end()) return &it->second;
  const Breakpoint* py = python_.find(id);
  return py ? py : r_breakpoints_.find(id);
}

Debugger::TaskView& Debugger::view(pid_t tid) {
  TaskView& v = views_[tid];
  if (!v.target) v.target = std::make_unique<TimelineTarget>(tl_, tid);
  return v;
}

Target& Debugger::target(pid_t tid) {
  return *view(tid).target;
}

const std::vector<StackFrame>& Debugger::stack(pid_t tid) {
  TaskView& v = view(tid);
  if (!v.stack_read) {
    v.frames = build_call_stack(*v.target, modules_, tid);
    v.vars = std::make_unique<FrameVariables>(*v.target, modules_, v.frames);
    v.stack_read = true;
  }
  return v.frames;
}

FrameVariables& Debugger::variables(pid_t tid) {
  stack(tid);
  return *view(tid).vars;
}

Value Debugger::evaluate(pid_t tid, size_t frame, const std::string& expr) {
  if (frame >= stack(tid).size()) throw ExpressionError("No frame " + std::to_string(frame) + ".");
  return evaluate_expression(expr, target(tid), variables(tid), frame);
}

void Debugger::load_trace_modules() {
  if (trace_modules_loaded_) return;
  trace_modules_loaded_ = true;
  std::error_code ec;
  auto dir = std::filesystem::canonical(std::filesystem::path(tl_.executable()).parent_path(), ec);
  if (ec) return;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    std::string file = entry.path().string();
    if (std::any_of(seen_.begin(), seen_.end(), [&](const auto& m) { return m->file() == file; }))
      continue;
    try {
      seen_.push_back(std::make_shared<Module>(file, file, 0));  // bias unknown: unused here
    } catch (const Error&) {
      // Not an ELF file (locale data, a cache the program mapped).
    }
  }
}

std::vector<ProcMapping> Debugger::current_mappings() {
  try {
    return tl_.mappings(tl_.current().tid);
  } catch (const Error&) {
    return {};  // no live task (after the last exit): addresses stand for themselves
  }
}

void Debugger::bind(Breakpoint& bp, const std::vector<ProcMapping>& maps) {
  bp.sites.clear();
  if (bp.spec.address) {
    // The code at that address in the current process.
    bind_breakpoint(bp, modules_.modules());
    bp.sites.push_back(code_site(maps, bp.spec.address));
    return;
  }
  // Armed in every program and library of the trace (its saved copies, which the replay
  // maps), in whichever process maps them; its addresses are where the current one does.
  load_trace_modules();
  bind_breakpoint(bp, seen_, &bp.sites);
  bp.addrs.clear();
  for (const CodeSite& site : bp.sites)
    for (uint64_t a : site_addresses(maps, site)) bp.addrs.push_back(a);
  std::sort(bp.addrs.begin(), bp.addrs.end());
  bp.addrs.erase(std::unique(bp.addrs.begin(), bp.addrs.end()), bp.addrs.end());
}

std::vector<Breakpoint> Debugger::replace_breakpoints(
    const std::function<bool(const Breakpoint&)>& replaced,
    const std::vector<BreakpointSpec>& specs) {
  for (auto it = breakpoints_.begin(); it != breakpoints_.end();) {
    if (replaced(it->second)) {
      for (const CodeSite& site : it->second.sites) refs_.remove(site);
      it = breakpoints_.erase(it);
    } else {
      ++it;
    }
  }
  std::vector<Breakpoint> out;
  std::vector<ProcMapping> maps = current_mappings();
  for (const BreakpointSpec& spec : specs) {
    if (!spec.condition.empty()) check_expression_syntax(spec.condition);
    if (!spec.hit_condition.empty()) hit_condition_holds(spec.hit_condition, 0);
    Breakpoint bp;
    bp.id = next_id_++;
    bp.spec = spec;
    bind(bp, maps);
    for (const CodeSite& site : bp.sites) refs_.add(site);
    breakpoints_[bp.id] = bp;
    out.push_back(bp);
  }
  return out;
}

Breakpoint Debugger::new_script_breakpoint(const BreakpointSpec& spec, ScriptLanguage lang) {
  if (!spec.condition.empty()) check_script_condition(lang, spec.condition);
  if (!spec.hit_condition.empty()) hit_condition_holds(spec.hit_condition, 0);
  Breakpoint bp;
  bp.id = next_id_++;
  bp.spec = spec;
  return bp;
}

std::vector<Breakpoint> Debugger::set_source_breakpoints(const std::string& file,
                                                         std::vector<BreakpointSpec> specs) {
  for (BreakpointSpec& spec : specs) spec.file = file;
  auto of_file = [&](const Breakpoint& bp) {
    return bp.spec.function.empty() && bp.spec.file == file;
  };
  const bool python = PythonBreakpoints::is_python_source(file);
  if (python || RBreakpoints::is_r_source(file)) {
    std::vector<Breakpoint> bps;
    for (const BreakpointSpec& spec : specs)
      bps.push_back(
          new_script_breakpoint(spec, python ? ScriptLanguage::Python : ScriptLanguage::R));
    const bool refused = refuse_script_breakpoints(bps);
    std::vector<Breakpoint> kept = refused ? std::vector<Breakpoint>{} : bps;
    std::vector<Breakpoint> bound =
        python ? python_.replace(of_file, kept) : r_breakpoints_.replace(of_file, kept);
    return refused ? bps : bound;
  }
  return replace_breakpoints(
      [&](const Breakpoint& bp) {
        return breakpoint_kind(bp.spec) == BreakpointKind::Source && bp.spec.file == file;
      },
      specs);
}

std::string Debugger::script_breakpoints_refusal() {
  if (hardware_debug_registers()) return "";
  return "this machine's CPU does not give programs its debug registers (a paravirtualised "
         "guest): rewind finds a script's lines by watching the interpreter read its code, and "
         "cannot see reads here";
}

bool Debugger::refuse_script_breakpoints(std::vector<Breakpoint>& bps) {
  const std::string why = script_breakpoints_refusal();
  if (bps.empty() || why.empty()) return false;
  for (Breakpoint& bp : bps) bp.message = why;
  return true;
}

std::optional<ScriptLanguage> Debugger::function_language(const std::string& name) {
  if (RBreakpoints::is_r_name(name) && exports_.runs_r() && !exports_.exports_function(name))
    return ScriptLanguage::R;
  if (PythonBreakpoints::is_python_function(name)) return ScriptLanguage::Python;
  return std::nullopt;
}

std::vector<Breakpoint> Debugger::set_function_breakpoints(
    const std::vector<BreakpointSpec>& specs) {
  // R functions by name ("accumulate") go to the R breakpoints, Python functions by
  // qualified name ("helper.accumulate") to the Python ones; the answer keeps the
  // request's order.
  auto language = [this](const std::string& name) { return function_language(name); };
  std::vector<std::optional<ScriptLanguage>> of;
  std::vector<BreakpointSpec> native;
  std::vector<Breakpoint> python, r;
  for (const BreakpointSpec& spec : specs) {
    of.push_back(language(spec.function));
    if (!of.back())
      native.push_back(spec);
    else
      (*of.back() == ScriptLanguage::R ? r : python)
          .push_back(new_script_breakpoint(spec, *of.back()));
  }
  std::vector<Breakpoint> bound_native = replace_breakpoints(
      [](const Breakpoint& bp) { return breakpoint_kind(bp.spec) == BreakpointKind::Function; },
      native);
  auto functions = [](const Breakpoint& bp) { return !bp.spec.function.empty(); };
  const bool refused = refuse_script_breakpoints(python) | refuse_script_breakpoints(r);
  std::vector<Breakpoint> bound_python =
      python_.replace(functions, refused ? std::vector<Breakpoint>{} : python);
  std::vector<Breakpoint> bound_r =
      r_breakpoints_.replace(functions, refused ? std::vector<Breakpoint>{} : r);
  if (refused) bound_python = python, bound_r = r;  // answered with the reason
  std::vector<Breakpoint> out;
  size_t n = 0, p = 0, q = 0;
  for (const auto& lang : of)
    out.push_back(!lang                        ? bound_native[n++]
                  : *lang == ScriptLanguage::R ? bound_r[q++]
                                               : bound_python[p++]);
  return out;
}

std::vector<Breakpoint> Debugger::set_instruction_breakpoints(
    const std::vector<BreakpointSpec>& specs) {
  return replace_breakpoints(
      [](const Breakpoint& bp) { return breakpoint_kind(bp.spec) == BreakpointKind::Instruction; },
      specs);
}

std::vector<int> Debugger::rebind_breakpoints() {
  std::vector<int> changed;
  std::vector<ProcMapping> maps = current_mappings();
  for (auto& [id, bp] : breakpoints_) {
    // The sites bound before (in libraries since unmapped) stay armed: the same code
    // anywhere holds the breakpoint.
    Breakpoint now = bp;
    bind(now, maps);
    std::vector<CodeSite> added;
    for (const CodeSite& site : now.sites)
      if (!std::binary_search(bp.sites.begin(), bp.sites.end(), site)) added.push_back(site);
    bool was_bound = !bp.sites.empty();
    bp.addrs = now.addrs;
    if (added.empty()) continue;
    for (const CodeSite& site : added) refs_.add(site);
    bp.sites.insert(bp.sites.end(), added.begin(), added.end());
    std::sort(bp.sites.begin(), bp.sites.end());
    if (!was_bound || bp.line == 0) {
      bp.line = now.line;
      bp.file = now.file;
      bp.message = now.message;
    }
    changed.push_back(id);
  }
  return changed;
}

std::string Debugger::format_log(pid_t tid, const std::string& message) {
  // "{expr}" is replaced by the expression's value, as VS Code's logpoints define.
  std::string out;
  for (size_t i = 0; i < message.size(); ++i) {
    if (message[i] != '{') {
      out += message[i];
      continue;
    }
    size_t close = message.find('}', i);
    if (close == std::string::npos) {
      out += message.substr(i);
      break;
    }
    std::string expr = message.substr(i + 1, close - i - 1);
    try {
      out += format_value(evaluate(tid, 0, expr), target(tid));
    } catch (const Error& e) {
      out += std::string("<") + e.what() + ">";
    }
    i = close;
  }
  return out;
}

std::vector<int> Debugger::hits_at(pid_t tid, uint64_t addr, std::vector<std::string>& log,
                                   std::string& error, bool count) {
  std::vector<int> ids;
  std::optional<CodeSite> site;
  for (auto& [id, bp] : breakpoints_) {
    if (bp.sites.empty()) continue;
    if (!site) site = tl_.code_site(tid, addr);
    if (!std::binary_search(bp.sites.begin(), bp.sites.end(), *site)) continue;
    auto holds = [&] {
      Value v = evaluate(tid, 0, bp.spec.condition);
      auto d = value_as_double(v, target(tid));
      if (!d) throw ExpressionError("the condition is not a number");
      return *d != 0;
    };
    arrive_at(
        bp, count, holds, [&] { return format_log(tid, bp.spec.log_message); }, ids, log, error);
  }
  return ids;
}

namespace {

/// Arms a session's Python and R line breakpoints, Python exception and R error stops for
/// one resume.
class ScriptResume {
 public:
  ScriptResume(PythonBreakpoints& py, PythonExceptions& exc, RErrors& r, RBreakpoints& rb,
               Direction dir)
      : py_(py), exc_(exc), r_(r), rb_(rb) {
    py_.begin_resume(dir);
    exc_.begin_resume(dir);
    rb_.begin_resume(dir);
  }
  ~ScriptResume() {
    py_.end_resume();
    exc_.end_resume();
    r_.end_resume();
    rb_.end_resume();
  }
  ScriptResume(const ScriptResume&) = delete;
  ScriptResume& operator=(const ScriptResume&) = delete;

 private:
  PythonBreakpoints& py_;
  PythonExceptions& exc_;
  RErrors& r_;
  RBreakpoints& rb_;
};

}  // namespace

DebugStop Debugger::resume(Direction dir, pid_t only_tid) {
  DebugStop out;
  ScriptResume scripts(python_, exceptions_, r_errors_, r_breakpoints_, dir);
  for (;;) {
    if (dir == Direction::Forward) {
      bool pending = std::any_of(breakpoints_.begin(), breakpoints_.end(),
                                 [](const auto& b) { return b.second.sites.empty(); }) ||
                     python_.waits_for_interpreter() || exceptions_.waits_for_interpreter() ||
                     r_errors_.waits_for_interpreter() || r_breakpoints_.waits_for_interpreter();
      if (pending != code_mapping_stops_) tl_.set_stop_at_code_mappings(pending);
      code_mapping_stops_ = pending;
    }
    // With Python breakpoints' read watchpoints armed, a reverse run stops after each
    // access (where they land from); a data breakpoint's stop is then moved back onto its
    // write below, where gdb's reverse semantics put it.
    python_.prepare();
    exceptions_.prepare();
    r_errors_.prepare();
    r_breakpoints_.prepare();
    bool after = dir == Direction::Backward && (python_.watching() || r_breakpoints_.watching());
    out.stop = dir == Direction::Forward
                   ? tl_.resume_forward()
                   : tl_.resume_backward(after ? Timeline::WatchStop::AfterWrite
                                               : Timeline::WatchStop::BeforeWrite);
    if (exceptions_.owns(out.stop)) {
      PythonExceptions::Outcome o = exceptions_.on_stop(out.stop, dir);
      if (o.stop) {
        moved();
        out.stop = o.at;
        out.exception = o.exception;
        return out;
      }
      // Most of these hits go on at once (an exception propagating): nothing is re-read,
      // unless a user breakpoint at the same place counts below.
      if (breakpoints_at(out.stop).empty()) continue;
    }
    if (r_breakpoints_.owns(out.stop)) {
      // Mostly statement starts and calls elsewhere: going on re-reads nothing.
      ScriptBreakpointOutcome o = r_breakpoints_.on_stop(out.stop, dir);
      out.log.insert(out.log.end(), o.log.begin(), o.log.end());
      if (!o.stop) continue;
      moved();
      out.stop = o.at;
      out.breakpoint_ids = o.ids;
      out.error = o.error;
      return out;
    }
    moved();
    if (python_.owns_watch(out.stop)) {
      PythonBreakpoints::Outcome o = python_.on_watch(out.stop, dir);
      moved();
      out.log.insert(out.log.end(), o.log.begin(), o.log.end());
      if (!o.stop) continue;
      out.stop = o.at;
      out.breakpoint_ids = o.ids;
      out.error = o.error;
      return out;
    }
    if ((out.exception = r_errors_.error_at(out.stop))) return out;
    if (python_.is_code_start(out.stop)) python_.on_code_start(out.stop);
    if (out.stop.reason == StopReason::CodeMapped) {
      for (int id : rebind_breakpoints())
        if (std::find(rebound_.begin(), rebound_.end(), id) == rebound_.end())
          rebound_.push_back(id);
      continue;
    }
    bool others = only_tid && out.stop.tid != only_tid;
    if (others &&
        (out.stop.reason == StopReason::Watchpoint || out.stop.reason == StopReason::Breakpoint))
      continue;
    if (out.stop.reason == StopReason::Watchpoint) {
      auto w = watches_.find(out.stop.addr);
      bool unchanged = out.stop.old_value == out.stop.new_value;
      if (w != watches_.end() && w->second.first == WatchKind::Write && unchanged) continue;
      if (after) {
        StopInfo on_write = tl_.step_backward(out.stop.tid);
        out.stop.event = on_write.event;
        moved();
      }
      return out;
    }
    if (out.stop.reason == StopReason::Signal &&
        !signal_stops_.stops(out.stop.signo, out.stop.fatal))
      continue;
    if (out.stop.reason != StopReason::Breakpoint) return out;
    out.breakpoint_ids = hits_at(out.stop.tid, out.stop.addr, out.log, out.error, true);
    if (!out.breakpoint_ids.empty() || !out.error.empty() || reported_.count(out.stop.addr))
      return out;
    // A logpoint, a false condition or an unmet hit count: keep going.
  }
}

void Debugger::report_stops_at(pid_t tid, uint64_t addr) {
  if (reported_.count(addr)) return;
  CodeSite site = tl_.code_site(tid, addr);
  refs_.add(site);
  reported_.emplace(addr, site);
}

void Debugger::stop_reporting(uint64_t addr) {
  auto it = reported_.find(addr);
  if (it == reported_.end()) return;
  refs_.remove(it->second);
  reported_.erase(it);
}

std::vector<int> Debugger::breakpoints_at(const StopInfo& s) {
  std::vector<int> ids;
  if (s.reason != StopReason::Breakpoint) return ids;
  CodeSite site = tl_.code_site(s.tid, s.addr);
  for (auto& [id, bp] : breakpoints_)
    if (std::binary_search(bp.sites.begin(), bp.sites.end(), site)) ids.push_back(id);
  return ids;
}

bool Debugger::stops_step(pid_t tid, uint64_t addr) {
  std::vector<std::string> log;
  std::string error;
  return !hits_at(tid, addr, log, error, true).empty() || !error.empty();
}

DebugStop Debugger::step_stop(const StopInfo& s) {
  moved();
  DebugStop out;
  out.stop = s;
  out.breakpoint_ids = breakpoints_at(s);
  return out;
}

DebugStop Debugger::script_step(const std::function<StopInfo()>& step) {
  try {
    return step_stop(step());
  } catch (...) {
    moved();  // the step may have moved the timeline before it failed
    throw;
  }
}

DebugStop Debugger::step_python(pid_t tid, const PythonReader& python, StepKind kind,
                                Direction dir) {
  PythonStepper stepper(tl_, python,
                        [this](pid_t t, uint64_t addr) { return stops_step(t, addr); });
  return script_step([&] {
    StopInfo s = stepper.step(tid, kind, dir);
    if (s.reason == StopReason::Step) python_.note_landing(s);
    return s;
  });
}

DebugStop Debugger::step_r(pid_t tid, const RReader& r, StepKind kind, Direction dir) {
  RStepper stepper(tl_, r, [this](pid_t t, uint64_t addr) { return stops_step(t, addr); });
  return script_step([&] { return stepper.step(tid, kind, dir); });
}

DebugStop Debugger::step(pid_t tid, StepKind kind, Direction dir, bool single_thread) {
  return step_stop(stepper_.step(tid, kind, dir, single_thread));
}

DebugStop Debugger::step_instruction(pid_t tid, Direction dir) {
  DebugStop out;
  out.stop = dir == Direction::Forward ? steps_.forward(tid) : steps_.backward(tid);
  moved();
  return out;
}

void check_watch_range(uint64_t addr, int len, const std::string& what) {
  (void)addr;
  if (len <= 0 || len > kMaxWatchBytes)
    throw Error("cannot watch " + what + ": " + std::to_string(len) +
                " bytes; a watchpoint covers 1 to " + std::to_string(kMaxWatchBytes) +
                " (follow one member or element)");
}

WatchInfo watch_info(const Value& v, const std::string& what) {
  if (v.loc.kind != Location::Kind::Memory || v.bit_size)
    throw Error("cannot watch " + what + ": it is not a value in memory");
  WatchInfo w;
  w.addr = v.loc.addr;
  w.len = int(type_size(*v.type));
  w.type = type_name(*v.type);
  w.value_type = v.type;
  check_watch_range(w.addr, w.len, what);
  return w;
}

WatchInfo Debugger::watchable(pid_t tid, size_t frame, const std::string& expr) {
  return watch_info(evaluate(tid, frame, expr), "\"" + expr + "\"");
}

WatchInfo Debugger::watch(pid_t tid, size_t frame, const std::string& expr, WatchKind kind) {
  WatchInfo w = watchable(tid, frame, expr);
  watch(w, kind);
  return w;
}

void Debugger::watch(const WatchInfo& w, WatchKind kind) {
  if (!tl_.add_watchpoint(w.addr, w.len, kind))
    throw Error("cannot watch " + std::to_string(w.len) + " bytes at " + hex(w.addr) +
                ": all hardware watchpoint slots are in use");
  watches_[w.addr] = {kind, w.len};
}

void Debugger::unwatch(const WatchInfo& w, WatchKind kind) {
  tl_.remove_watchpoint(w.addr, w.len, kind);
  watches_.erase(w.addr);
}

void Debugger::set_watches_aside(uint64_t keep, int len) {
  restore_watches();
  for (const auto& [addr, watch] : watches_) {
    if (addr == keep && watch == std::make_pair(WatchKind::Write, len)) continue;
    tl_.remove_watchpoint(addr, watch.second, watch.first);
    set_aside_.emplace_back(addr, watch);
  }
}

void Debugger::restore_watches() {
  for (const auto& [addr, watch] : std::exchange(set_aside_, {}))
    tl_.add_watchpoint(addr, watch.second, watch.first);
}

bool Debugger::has_breakpoint_site(const CodeSite& site) const {
  for (const auto& [id, bp] : breakpoints_)
    if (std::binary_search(bp.sites.begin(), bp.sites.end(), site)) return true;
  return false;
}

bool Debugger::watching(uint64_t addr, int len) const {
  auto it = watches_.find(addr);
  return it != watches_.end() && it->second == std::make_pair(WatchKind::Write, len);
}

}  // namespace rwd
