#include "engine/debugger/python_breakpoints.h"

#include <algorithm>
#include <cctype>

#include "engine/debugger/timeline_target.h"
#include "engine/interp/script_condition.h"

namespace rwd {

namespace {

constexpr size_t kMaxCodes = 200000;  // code objects remembered (a big program has ~100,000)

/// Whether `file` is the source of module `module` ("pkg.mod": .../pkg/mod.py or
/// .../pkg/mod/__init__.py).
bool module_file(const std::string& module, const std::string& file) {
  std::string rel = module;
  std::replace(rel.begin(), rel.end(), '.', '/');
  return file.ends_with("/" + rel + ".py") || file == rel + ".py" ||
         file.ends_with("/" + rel + "/__init__.py");
}

/// Whether code `c` is the function a breakpoint names "module.qualname" ("helper.accumulate",
/// "pkg.mod.Klass.method"): some split of the name at a dot gives `c`'s module file and its
/// co_qualname.
bool names_function(const std::string& name, const std::string& file, const std::string& qual) {
  for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1))
    if ((qual.empty() || name.compare(dot + 1, std::string::npos, qual) == 0) &&
        module_file(name.substr(0, dot), file))
      return true;
  return false;
}

/// Whether breakpoint `bp` may bind in code of `file` (read through when a module of it runs).
bool wants_file(const Breakpoint& bp, const std::string& file) {
  return bp.spec.function.empty() ? same_source_file(bp.spec.file, file)
                                  : names_function(bp.spec.function, file, "");
}

}  // namespace

bool PythonBreakpoints::is_python_source(const std::string& path) {
  return path.ends_with(".py") || path.ends_with(".pyw");
}

void PythonBreakpoints::discover(pid_t tid, uint64_t code) {
  const PythonReader* py = python_.reader();
  if (!py) return;
  TimelineTarget t(tl_, tid);
  InterpMemory mem(t);
  std::vector<uint64_t> todo = {code};
  while (!todo.empty() && codes_.size() < kMaxCodes) {
    uint64_t at = todo.back();
    todo.pop_back();
    try {
      PythonCode c = read_python_code(mem, py->layout(), at);
      auto known = codes_.find(at);
      // Nested code objects are constants of their parent: met again with it, they are
      // known already, unless the memory now holds another one.
      if (known != codes_.end() && known->second.file == c.file &&
          known->second.qualname == c.qualname && known->second.firstlineno == c.firstlineno)
        continue;
      todo.insert(todo.end(), c.nested.begin(), c.nested.end());
      codes_[at] = std::move(c);
    } catch (const InterpReadError&) {
      // Not a code object (any more): nothing to bind in.
    }
  }
}

void PythonBreakpoints::discover_stacks() {
  const PythonReader* py = python_.reader();
  if (!py) return;
  for (const TaskInfo& task : tl_.tasks()) {
    std::vector<uint64_t> codes;
    try {
      TimelineTarget t(tl_, task.tid);
      InterpMemory mem(t);
      for (const InterpFrame& f : py->stack(mem, task.tid, {SIZE_MAX, 0}))
        if (f.error.empty() && f.address) codes.push_back(py->frame_code(mem, f.address));
    } catch (const Error&) {
      continue;  // a task of another program, or one in the middle of an update
    }
    for (uint64_t c : codes) discover(task.tid, c);
  }
}

void PythonBreakpoints::discover_functions() {
  const PythonReader* py = python_.reader();
  if (!py) return;
  pid_t tid = tl_.current().tid;
  std::vector<uint64_t> wanted;
  try {
    TimelineTarget t(tl_, tid);
    InterpMemory mem(t);
    std::map<uint64_t, bool> files;  // co_filename's str object -> whether breakpoints want it
    for (uint64_t code : py->function_codes(mem, kMaxCodes)) {
      if (codes_.count(code)) continue;
      uint64_t name = mem.u64(code + uint64_t(py->layout().code_filename));
      auto known = files.find(name);
      if (known == files.end()) {
        std::string file = python_str(mem, py->layout(), name, 4096);
        bool want = std::any_of(bps_.begin(), bps_.end(),
                                [&](const auto& b) { return wants_file(b.second, file); });
        known = files.emplace(name, want).first;
      }
      if (known->second) wanted.push_back(code);
    }
  } catch (const InterpReadError&) {
    // The interpreter is in the middle of an update here: what was read so far.
  }
  for (uint64_t code : wanted) discover(tid, code);
}

bool PythonBreakpoints::bind(Breakpoint& bp) {
  Breakpoint before = bp;
  const PythonReader* py = python_.reader();
  bp.addrs.clear();
  bp.line = 0;
  bp.file.clear();
  if (!py) {
    bp.message = "no Python interpreter is running here yet: the breakpoint binds once it runs";
  } else {
    // A function: the first line of its body, in each code object it names. A line: the first
    // line from it with code in any code object of the file, in each that has it.
    bool function = !bp.spec.function.empty();
    int first = 0;  // a line breakpoint's line
    if (!function)
      for (const auto& [at, c] : codes_)
        if (same_source_file(bp.spec.file, c.file))
          if (int l = python_next_line_with_code(c, int(bp.spec.line)); l && (!first || l < first))
            first = l;
    int line = first;
    for (const auto& [at, c] : codes_) {
      int l = function ? (names_function(bp.spec.function, c.file, c.qualname)
                              ? python_next_line_with_code(c, 0)
                              : 0)
                       : (same_source_file(bp.spec.file, c.file) ? first : 0);
      if (!l) continue;
      line = l;
      for (uint64_t a : python_line_starts(c, py->layout(), l)) {
        bp.addrs.push_back(a);
        bp.file = c.file;
        watched_[a] = {at, l};
      }
    }
    bp.line = uint32_t(line);
    bp.message = !bp.addrs.empty() ? ""
                 : function
                     ? "no Python function of this name is known here: it binds when its "
                       "module runs forwards (name it module.qualname, as helper.accumulate)"
                     : "no code of this file at this line is alive here: the breakpoint binds "
                       "when the interpreter runs the module forwards (a module's top-level "
                       "code is freed once it is imported: go back before the import)";
  }
  std::sort(bp.addrs.begin(), bp.addrs.end());
  bp.addrs.erase(std::unique(bp.addrs.begin(), bp.addrs.end()), bp.addrs.end());
  return bp.addrs != before.addrs || bp.line != before.line || bp.message != before.message;
}

void PythonBreakpoints::bind_all() {
  watched_.clear();
  for (auto& [id, bp] : bps_)
    if (bind(bp) && std::find(rebound_.begin(), rebound_.end(), id) == rebound_.end())
      rebound_.push_back(id);
}

bool PythonBreakpoints::is_python_function(const std::string& name) {
  if (name.find('.') == std::string::npos || name.front() == '.' || name.back() == '.')
    return false;
  for (char ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.' && ch != '<' &&
        ch != '>' && !(ch & 0x80))
      return false;
  return true;
}

std::vector<Breakpoint> PythonBreakpoints::replace(
    const std::function<bool(const Breakpoint&)>& replaced, std::vector<Breakpoint> bps) {
  for (auto it = bps_.begin(); it != bps_.end();)
    it = replaced(it->second) ? bps_.erase(it) : std::next(it);
  for (Breakpoint& bp : bps) bps_[bp.id] = bp;
  discover_stacks();
  bind_all();
  if (any_pending()) {
    // Modules imported before this point: their functions, alive in the collector's lists.
    size_t known = codes_.size();
    discover_functions();
    if (codes_.size() != known) bind_all();
  }
  std::vector<Breakpoint> out;
  for (const Breakpoint& bp : bps) {
    out.push_back(bps_[bp.id]);
    rebound_.erase(std::remove(rebound_.begin(), rebound_.end(), bp.id), rebound_.end());
  }
  return out;
}

const Breakpoint* PythonBreakpoints::find(int id) const {
  auto it = bps_.find(id);
  return it == bps_.end() ? nullptr : &it->second;
}

void PythonBreakpoints::arm() {
  for (const auto& [addr, code] : watched_) {
    if (std::find(armed_.begin(), armed_.end(), addr) != armed_.end()) continue;
    if (!tl_.add_watchpoint(addr, 2, WatchKind::ReadWrite)) {
      // Every debug register is taken (data breakpoints, or more places than registers).
      for (auto& [id, bp] : bps_)
        if (std::binary_search(bp.addrs.begin(), bp.addrs.end(), addr) &&
            bp.message.find("debug register") == std::string::npos) {
          bp.message = "not every place of this line is watched: each takes one of the " +
                       std::to_string(kWatchSlots) +
                       " debug registers (remove a data breakpoint or another Python one)";
          rebound_.push_back(id);
        }
      continue;
    }
    armed_.push_back(addr);
  }
}

void PythonBreakpoints::disarm() {
  for (uint64_t a : armed_) tl_.remove_watchpoint(a, 2, WatchKind::ReadWrite);
  armed_.clear();
}

void PythonBreakpoints::begin_resume(Direction dir) {
  dir_ = dir;
  skip_tid_ = 0;
  skipped_rip_ = 0;
  if (dir == Direction::Backward && at_landing()) skip_tid_ = landing_->first.tid;
  if (any_pending()) {
    // Pending ones: the code on the stacks here may be theirs.
    size_t known = codes_.size();
    discover_stacks();
    if (codes_.size() != known) bind_all();
  }
}

void PythonBreakpoints::prepare() {
  if (bps_.empty() || !python_.reader()) return;
  if (dir_ == Direction::Forward && !code_start_) {
    // Forwards, each module body run in a file with breakpoints is read for code.
    uint64_t at = python_.function("PyEval_EvalCode");
    const Module* m = at ? python_.module_at(at) : nullptr;
    if (m) {
      try {
        if (!code_start_known_ || code_start_known_->addr != at ||
            code_start_known_->file != m->file() || code_start_known_->lo != m->lo())
          code_start_known_ =
              KnownSite{at, m->file(), m->lo(), tl_.code_site(tl_.current().tid, at)};
        code_start_site_ = code_start_known_->site;
        refs_.add(*code_start_site_);
        code_start_ = at;
      } catch (const Error&) {
      }
    }
  }
  arm();
}

bool PythonBreakpoints::any_pending() const {
  return std::any_of(bps_.begin(), bps_.end(),
                     [](const auto& b) { return b.second.addrs.empty(); });
}

bool PythonBreakpoints::waits_for_interpreter() {
  return dir_ == Direction::Forward && !bps_.empty() && !python_.reader();
}

void PythonBreakpoints::end_resume() {
  disarm();
  if (code_start_site_) refs_.remove(*code_start_site_);
  code_start_site_.reset();
  code_start_ = 0;
}

void PythonBreakpoints::on_code_start(const StopInfo& s) {
  uint64_t code = tl_.registers(s.tid).rdi;  // PyEval_EvalCode(co, globals, locals)
  const PythonReader* py = python_.reader();
  if (!py) return;
  // Only files with breakpoints are read through (a program imports hundreds of modules,
  // each with hundreds of code objects).
  std::string file;
  try {
    TimelineTarget t(tl_, s.tid);
    InterpMemory mem(t);
    if (python_type_name(mem, code) != "code") return;
    file = python_str(mem, py->layout(), mem.u64(code + uint64_t(py->layout().code_filename)));
  } catch (const InterpReadError&) {
    return;
  }
  if (std::none_of(bps_.begin(), bps_.end(),
                   [&](const auto& b) { return wants_file(b.second, file); }))
    return;
  size_t known = codes_.size();
  discover(s.tid, code);
  if (codes_.size() == known || bps_.empty()) return;
  disarm();
  bind_all();
  arm();
}

uint64_t PythonBreakpoints::fetching_frame(pid_t tid, uint64_t addr) {
  const PythonReader* py = python_.reader();
  auto w = watched_.find(addr);
  if (!py || w == watched_.end()) return 0;
  uint64_t rip = tl_.registers(tid).rip;
  if (!python_.in_eval_loop(rip)) return 0;  // quickening, code.co_code, ...
  if (secondary_rips_.count(rip)) return 0;  // a later read of the same fetch
  try {
    TimelineTarget t(tl_, tid);
    InterpMemory mem(t);
    uint64_t frame = py->current_frame(mem, tid);
    if (!frame || py->frame_code(mem, frame) != w->second.first) return 0;
    // Inside the instruction itself (specializing it, or its deoptimization) it is the
    // frame's current instruction already.
    if (mem.u64(py->step_word(frame)) == addr) return 0;
    return frame;
  } catch (const InterpReadError&) {
    return 0;
  }
}

PythonBreakpoints::Outcome PythonBreakpoints::on_watch(const StopInfo& s, Direction dir) {
  Outcome out;
  uint64_t frame = fetching_frame(s.tid, s.addr);
  if (!frame) return out;
  if (dir == Direction::Backward && skip_tid_ == s.tid) {
    skip_tid_ = 0;  // the fetch that led to where the run began, or to a landing passed
    skipped_rip_ = tl_.registers(s.tid).rip;
    return out;
  }
  // Forward to where the frame's instruction pointer is written next: the fetched
  // instruction starts there (or, fused into the one before it, the next). The unit's own
  // watchpoint stays: further reads of it on the way are part of the same fetch (some
  // builds load the opcode and the argument bytes apart).
  const PythonReader& py = *python_.reader();
  uint64_t word = py.step_word(frame);
  disarm();
  bool unit = tl_.add_watchpoint(s.addr, 2, WatchKind::ReadWrite);
  if (!unit || !tl_.add_watchpoint(word, 8, WatchKind::Write)) {
    if (unit) tl_.remove_watchpoint(s.addr, 2, WatchKind::ReadWrite);
    arm();
    out.stop = true;
    out.at = s;
    out.error = "cannot land on the Python line: no debug register is free";
    return out;
  }
  auto unwatch = [&] {
    tl_.remove_watchpoint(word, 8, WatchKind::Write);
    tl_.remove_watchpoint(s.addr, 2, WatchKind::ReadWrite);
    arm();
  };
  StopInfo landing;
  std::vector<uint64_t> more;  // rips of the unit's later reads in this fetch
  for (;;) {
    StopInfo n = tl_.resume_forward();
    if (n.reason == StopReason::Watchpoint && n.addr == word && n.tid == s.tid) {
      landing = n;
      break;
    }
    if (n.reason == StopReason::Watchpoint && n.addr == s.addr && n.tid == s.tid)
      more.push_back(tl_.registers(s.tid).rip);
    if (n.reason == StopReason::Watchpoint || n.reason == StopReason::Breakpoint ||
        n.reason == StopReason::CodeMapped)
      continue;
    unwatch();
    out.stop = true;  // a signal or the end came first
    out.at = n;
    return out;
  }
  unwatch();
  secondary_rips_.insert(more.begin(), more.end());
  if (dir == Direction::Backward) {
    skip_tid_ = s.tid;  // going on back passes this fetch again
    if (skipped_rip_ && std::find(more.begin(), more.end(), skipped_rip_) != more.end()) {
      // The read skipped last was this same fetch's later one (learnt only now): this is
      // the landing the run went back from.
      skipped_rip_ = 0;
      return out;
    }
  }
  std::vector<InterpFrame> stack;
  {
    TimelineTarget t(tl_, s.tid);
    InterpMemory mem(t);
    stack = py.stack(mem, s.tid, {1, 1});  // (the frame it lands in)
  }
  if (stack.empty() || !stack[0].error.empty() || stack[0].address != frame) return out;
  const InterpFrame& top = stack[0];
  for (auto& [id, bp] : bps_) {
    if (watched_[s.addr].second != top.line ||
        !std::binary_search(bp.addrs.begin(), bp.addrs.end(), s.addr))
      continue;
    arrive_at(
        bp, true,
        [&] {
          return script_condition_holds(ScriptLanguage::Python, bp.spec.condition, top.locals);
        },
        [&] { return script_log_message(bp.spec.log_message, top.locals); }, out.ids, out.log,
        out.error);
  }
  if (out.ids.empty()) return out;
  out.stop = true;
  out.at = landing;
  out.at.reason = StopReason::Breakpoint;
  out.at.addr = s.addr;
  out.at.old_value.clear();
  out.at.new_value.clear();
  skip_tid_ = 0;
  note_landing(out.at);
  return out;
}

void PythonBreakpoints::note_landing(const StopInfo& s) {
  try {
    landing_ = std::make_pair(s, tl_.registers(s.tid));
  } catch (const Error&) {
    landing_.reset();
  }
}

bool PythonBreakpoints::at_landing() {
  StopInfo now = tl_.current();
  const PythonReader* py = python_.reader();
  if (!landing_ || !py) return false;
  const StopInfo& l = landing_->first;
  if (now.event != l.event || now.tid != l.tid) return false;
  try {
    if (!registers_equal(tl_.registers(now.tid), landing_->second)) return false;
    // The instruction the frame starts here was fetched just before (or, fused into the one
    // before it, the one before that): a watched one is the fetch a reverse run meets first.
    TimelineTarget t(tl_, now.tid);
    InterpMemory mem(t);
    uint64_t frame = py->current_frame(mem, now.tid);
    if (!frame) return false;
    uint64_t instr = mem.u64(py->step_word(frame));
    uint64_t code = py->frame_code(mem, frame);
    for (uint64_t at : {instr, instr - 2}) {
      auto w = watched_.find(at);
      if (w != watched_.end() && w->second.first == code) return true;
    }
  } catch (const Error&) {
  }
  return false;
}

}  // namespace rwd
