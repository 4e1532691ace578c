#include "engine/debugger/r_breakpoints.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "engine/debugger/step_watches.h"
#include "engine/debugger/timeline_target.h"
#include "engine/interp/script_condition.h"

namespace rwd {

namespace {

/// R's parser (gram.y), run for each top-level expression R reads (the REPL, R -e, R -f)
/// and by parse() (source(), sys.source(), parse(text = )): code of a file can run only
/// after it.
constexpr const char* kParser = "Rf_yyparse";

/// Makes `out` report a breakpoint hit at `where` (the stop just after a bound place's write
/// or fetch), at bound place `place`.
void report_hit(ScriptBreakpointOutcome& out, const StopInfo& where, uint64_t place) {
  out.stop = true;
  out.at = where;
  out.at.reason = StopReason::Breakpoint;
  out.at.addr = place;
  out.at.old_value.clear();
  out.at.new_value.clear();
}

}  // namespace

void RBreakpoints::begin_resume(Direction dir) {
  dir_ = dir;
  start_.reset();
  skip_.reset();
  live_ = false;
  prepared_ = false;
  sites_ = false;
  globals_only_ = false;
  if (bps_.empty()) return;
  if (dir == Direction::Backward) {
    try {
      StopInfo now = tl_.current();
      start_ = std::make_pair(now, tl_.registers(now.tid));
    } catch (const Error&) {
    }
  }
  bool pending =
      std::any_of(bps_.begin(), bps_.end(), [](const auto& b) { return b.second.addrs.empty(); });
  if (pending && reader()) {
    try {
      TimelineTarget t(tl_, tl_.current().tid);
      InterpMemory mem(t);
      discover(mem);
      // A file being sourced here may run more of its top-level code.
      std::optional<std::string> parsing = reader_->parse_source(mem);
      if (parsing && (functions_pending() || (!parsing->empty() && wanted(*parsing)))) live_ = true;
    } catch (const Error&) {
    }
  }
}

void RBreakpoints::on_parse(pid_t tid) {
  const RReader* r = reader();
  if (!r) return;
  TimelineTarget t(tl_, tid);
  InterpMemory mem(t);
  // Code R parses at the top level (R -e, R -f, the REPL) has srcrefs naming no file (""):
  // only a function breakpoint may bind in it.
  std::optional<std::string> file = r->parse_source(mem);
  if (sites_) {
    // Watching sites forwards: R's globals again when R parses a file with breakpoints (its
    // code made anew), or any file while function breakpoints are set (a function of that
    // name may be defined again).
    if (file && !file->empty() && (has_functions() || wanted(*file))) {
      globals_only_ = true;
      prepared_ = false;
    }
    return;
  }
  if (!file) {
    // The REPL parses one expression, runs it, then parses the next: what the ones before
    // defined is found here, with no watchpoint (R's start parses its profiles so, and the
    // code that sources a file).
    if (has_functions()) discover(mem);
    return;
  }
  // A bound breakpoint's code is made when its file is parsed (before that, forwards from
  // an earlier point than where it was found).
  bool bound_here = std::any_of(bps_.begin(), bps_.end(), [&](const auto& b) {
    return !b.second.addrs.empty() && !b.second.file.empty() &&
           same_source_file(b.second.file, *file);
  });
  if (functions_pending() || (!file->empty() && (wanted(*file) || bound_here))) live_ = true;
}

void RBreakpoints::prepare() {
  if (bps_.empty()) return;
  const RReader* r = reader();
  if (!live_ && r && !all_pending() && (dir_ == Direction::Backward || code_exists_here()))
    live_ = true;
  if (!live_) {
    // Nothing bound yet: no code of these files can run before R parses them. Until then
    // the watchpoints stay off (R's start runs hundreds of thousands of statements and
    // calls), and a breakpoint on the parser tells when.
    if (dir_ == Direction::Backward) return;
    uint64_t at = modules_.function_range(kParser).first;
    if (at && !parser_) {
      try {
        parser_ = tl_.code_site(tl_.current().tid, at);
        refs_.add(*parser_);
        parser_at_ = at;
      } catch (const Error&) {
      }
    }
    return;
  }
  if (!r) return;
  live_ = true;
  // Forwards on R's globals, the bound places' code may come to exist (R parsed their file):
  // their words are watched from there (a few reads at each stop).
  bool sites_now = dir_ == Direction::Forward && prepared_ && !sites_ && !globals_only_ &&
                   site_words().has_value();
  if (prepared_ && armed_version_ == bound_version_ && !sites_now) return;
  // First, or the bound places changed (code found or compiled), or R parsed again: armed
  // anew.
  disarm();
  prepared_ = true;
  armed_version_ = bound_version_;
  sites_ = !globals_only_ && arm_sites();
  if (getenv("REWIND_DEBUG_RBREAK"))
    fprintf(stderr, "[r breakpoints] watching %s (%zu bound places)\n",
            sites_ ? "the bound places" : "R's globals", bound_.size());
  // Forwards, sites stay right until R parses a file of theirs again.
  if (sites_ && dir_ == Direction::Forward) {
    uint64_t at = modules_.function_range(kParser).first;
    if (at && !parser_) try {
        parser_ = tl_.code_site(tl_.current().tid, at);
        refs_.add(*parser_);
        parser_at_ = at;
      } catch (const Error&) {
      }
    return;
  }
  if (parser_) {
    refs_.remove(*parser_);
    parser_.reset();
    parser_at_ = 0;
  }
  if (sites_) return;
  RReader::StepGlobals g = r->step_globals();
  for (uint64_t word : {g.srcref, g.bcpc})
    if (word && tl_.add_watchpoint(word, 8, WatchKind::Write))
      armed_.push_back({word, WatchKind::Write});
  if (armed_.empty()) {
    for (auto& [id, bp] : bps_)
      if (bp.message.find("debug register") == std::string::npos) {
        bp.message =
            "R lines cannot be watched: every debug register is taken (remove a "
            "data breakpoint)";
        rebound_.push_back(id);
      }
    return;
  }
  if (!g.bcpc) return;
  try {
    TimelineTarget t(tl_, tl_.current().tid);
    InterpMemory mem(t);
    arm_bytecode(mem, mem.u64(g.bcpc), r->running_bytecode(mem));
  } catch (const Error&) {
  }
}

std::optional<std::vector<uint64_t>> RBreakpoints::site_words() {
  const bool forward = dir_ == Direction::Forward;
  // Forwards, code still to be found (a breakpoint bound nowhere) shows only on R's globals.
  if (forward && (bound_.empty() || std::any_of(bps_.begin(), bps_.end(), [](const auto& b) {
                    return b.second.addrs.empty();
                  })))
    return std::nullopt;
  if (bound_.size() > size_t(kWatchSlots)) return std::nullopt;
  std::vector<uint64_t> words;
  for (const auto& [site, line] : bound_) {
    auto w = site_word_.find(site);
    if (w == site_word_.end()) return std::nullopt;  // top-level code: only R_Srcref tells
    words.push_back(w->second);
  }
  try {
    TimelineTarget t(tl_, tl_.current().tid);
    InterpMemory mem(t);
    std::vector<uint64_t> present;
    for (uint64_t w : words) {
      uint64_t content = site_content_[w];
      if (!content) return std::nullopt;  // not known what it holds: R's globals tell
      try {
        if (mem.u64(w) == content) present.push_back(w);
      } catch (const InterpReadError&) {
      }
      // Else its code is made later, and did not run before.
    }
    // Forwards, code made later (or freed) must be found as it is made.
    if (forward && present.size() != words.size()) return std::nullopt;
    return present;
  } catch (const Error&) {
    return std::nullopt;
  }
}

bool RBreakpoints::arm_sites() {
  const bool forward = dir_ == Direction::Forward;
  std::optional<std::vector<uint64_t>> words = site_words();
  if (!words) return false;
  // No debug register left for them (data breakpoints, or a body pointer each): R's globals
  // for the rest of the resume, not tried again at each stop.
  auto refused = [&] {
    disarm();
    globals_only_ = true;
    return false;
  };
  for (uint64_t w : *words) {
    if (!tl_.add_watchpoint(w, 8, WatchKind::ReadWrite)) return refused();
    armed_.push_back({w, WatchKind::ReadWrite});
  }
  if (!forward) return true;
  // The JIT compiling a closure with a bound place (its body pointer written): no debug
  // register left for one, R's globals tell.
  for (const auto& [key, c] : codes_) {
    if (c.bytecode || !header_line_.count(key)) continue;  // byte code, top-level code
    auto in_code = [&](uint64_t place) {
      for (const auto& [line, places] : c.starts)
        if (std::find(places.begin(), places.end(), place) != places.end()) return true;
      return false;
    };
    if (!std::any_of(bound_.begin(), bound_.end(), [&](const auto& b) { return in_code(b.first); }))
      continue;
    uint64_t word = RReader::closure_body_word(key);
    if (armed_.size() >= size_t(kWatchSlots) || !tl_.add_watchpoint(word, 8, WatchKind::Write))
      return refused();
    armed_.push_back({word, WatchKind::Write});
    body_words_[word] = key;
  }
  return true;
}

void RBreakpoints::on_compiled(const StopInfo& s, uint64_t closure) {
  uint64_t body = word_value(s.new_value);
  TimelineTarget t(tl_, s.tid);
  InterpMemory mem(t);
  std::set<std::string> names;
  if (auto it = code_names_.find(closure); it != code_names_.end()) names = it->second;
  if (names.empty()) names.insert("");
  for (const std::string& name : names) learn(mem, closure, body, name);
  bind_all();  // moves bound_version_ when the byte code has bound lines: armed anew
}

std::optional<StopInfo> RBreakpoints::land_statement(const StopInfo& read, uint64_t srcref) {
  // The evaluator read the statement's srcref from its `{`'s list: forwards to where it
  // sets R_Srcref to it, the statement's start (the point forward runs stop at).
  std::vector<std::pair<uint64_t, WatchKind>> was = armed_;
  for (auto [word, kind] : was) tl_.remove_watchpoint(word, 8, kind);
  armed_.clear();
  uint64_t srcref_word = reader_->step_globals().srcref;
  std::optional<StopInfo> landed;
  if (tl_.add_watchpoint(srcref_word, 8, WatchKind::Write)) {
    for (;;) {
      StopInfo n = tl_.resume_forward();
      if (n.reason == StopReason::Watchpoint && n.addr == srcref_word && n.tid == read.tid) {
        if (word_value(n.new_value) == srcref) landed = n;
        break;
      }
      if (n.reason == StopReason::Watchpoint || n.reason == StopReason::Breakpoint ||
          n.reason == StopReason::CodeMapped)
        continue;
      break;  // a signal or the end came first
    }
    tl_.remove_watchpoint(srcref_word, 8, WatchKind::Write);
  }
  for (auto [word, kind] : was)
    if (tl_.add_watchpoint(word, 8, kind)) armed_.push_back({word, kind});
  return landed;
}

void RBreakpoints::disarm() {
  disarm_bytecode();
  for (auto [word, kind] : armed_) tl_.remove_watchpoint(word, 8, kind);
  armed_.clear();
  body_words_.clear();
}

void RBreakpoints::end_resume() {
  disarm();
  if (parser_) refs_.remove(*parser_);
  parser_.reset();
  parser_at_ = 0;
}

void RBreakpoints::disarm_bytecode() {
  if (third_) tl_.remove_watchpoint(third_, 8, third_kind_);
  third_ = 0;
}

void RBreakpoints::arm_bytecode(InterpMemory& mem, uint64_t pc_word, uint64_t body) {
  if (!pc_word) return disarm_bytecode();
  // The byte code that frame runs: the known one its pc is in, else (a bcEval starting)
  // `body`, read now.
  uint64_t pc = 0;
  try {
    pc = mem.u64(pc_word);
  } catch (const InterpReadError&) {
  }
  const RCode* code = nullptr;
  auto containing = [&](uint64_t at) -> const RCode* {
    for (const auto& [key, c] : codes_)
      if (c.bytecode && at >= c.code_begin && at < c.code_end) return &c;
    return nullptr;
  };
  if (pc) code = containing(pc);
  if (!code && body) {
    size_t known = codes_.size();
    uint64_t key = learn_bytecode(mem, body);
    if (codes_.size() != known) bind_all();
    auto it = codes_.find(key);
    if (key && it != codes_.end()) code = &it->second;
  }
  if (!code) return disarm_bytecode();
  std::vector<uint64_t> sites;
  for (auto it = bound_.lower_bound(code->code_begin);
       it != bound_.end() && it->first < code->code_end; ++it)
    sites.push_back(it->first);
  if (sites.empty()) return disarm_bytecode();
  // One bound line: its first instruction's fetch. Several: the frame's every instruction.
  uint64_t word = sites.size() == 1 ? sites[0] : pc_word;
  WatchKind kind = sites.size() == 1 ? WatchKind::ReadWrite : WatchKind::Write;
  if (word == third_ && kind == third_kind_) return;
  disarm_bytecode();
  if (!tl_.add_watchpoint(word, 8, kind)) {
    for (auto& [id, bp] : bps_)
      if (bp.message.empty() && std::any_of(sites.begin(), sites.end(), [&](uint64_t s) {
            return std::binary_search(bp.addrs.begin(), bp.addrs.end(), s);
          })) {
        bp.message =
            "not watched in byte-compiled code: no debug register is free (remove "
            "a data breakpoint)";
        rebound_.push_back(id);
      }
    return;
  }
  third_ = word;
  third_kind_ = kind;
}

bool RBreakpoints::owns(const StopInfo& s) const {
  if (s.reason == StopReason::Breakpoint) return parser_at_ && s.addr == parser_at_;
  if (s.reason != StopReason::Watchpoint) return false;
  if (third_ && s.addr == third_) return true;
  return std::any_of(armed_.begin(), armed_.end(),
                     [&](const auto& a) { return a.first == s.addr; });
}

bool RBreakpoints::at_start(pid_t tid) {
  if (!start_) return false;
  StopInfo now = tl_.current();
  const auto& [at, regs] = *start_;
  if (now.event != at.event || tid != at.tid) return false;
  try {
    return registers_equal(tl_.registers(tid), regs);
  } catch (const Error&) {
    return false;
  }
}

void RBreakpoints::arrive(uint64_t at, InterpMemory& mem, ScriptBreakpointOutcome& out) {
  std::vector<InterpFrame> st;
  try {
    st = reader_->stack(mem, 1);  // (the locals of the frame it stops in)
  } catch (const InterpReadError&) {
  }
  static const std::vector<InterpVariable> none;
  const std::vector<InterpVariable>& locals = st.empty() ? none : st[0].locals;
  int line = bound_[at];
  if (getenv("REWIND_DEBUG_RBREAK"))
    fprintf(stderr, "[r breakpoints] line %d reached at %s: %s:%d\n", line, hex(at).c_str(),
            st.empty() ? "-" : st[0].function.c_str(), st.empty() ? 0 : st[0].line);
  for (auto& [id, bp] : bps_) {
    if (!std::binary_search(bp.addrs.begin(), bp.addrs.end(), at)) continue;
    arrive_at(
        bp, true,
        [&] { return script_condition_holds(ScriptLanguage::R, bp.spec.condition, locals); },
        [&] { return script_log_message(bp.spec.log_message, locals); }, out.ids, out.log,
        out.error);
  }
}

ScriptBreakpointOutcome RBreakpoints::on_stop(const StopInfo& s, Direction dir) {
  ScriptBreakpointOutcome out;
  static const bool debug = getenv("REWIND_DEBUG_RBREAK") != nullptr;
  if (debug)
    fprintf(stderr, "[r breakpoints] %s stop at %s, event %llu, task %d: %s -> %s\n",
            dir == Direction::Forward ? "forward" : "backward", hex(s.addr).c_str(),
            (unsigned long long)s.event, s.tid, hex(word_value(s.old_value)).c_str(),
            hex(word_value(s.new_value)).c_str());
  if (s.reason == StopReason::Breakpoint) {  // the parser
    on_parse(s.tid);
    return out;
  }
  const RReader* r = reader();
  if (!r) return out;
  RReader::StepGlobals g = r->step_globals();
  TimelineTarget t(tl_, s.tid);
  InterpMemory mem(t);
  uint64_t at = 0;  // the bound place reached
  if (s.addr == g.bcpc) {
    // Another bcEval is innermost from here on (forwards), or was until here (backwards).
    uint64_t word = word_value(dir == Direction::Forward ? s.new_value : s.old_value);
    uint64_t body = 0;
    try {
      if (dir == Direction::Forward) body = r->running_bytecode(mem);
    } catch (const InterpReadError&) {
    }
    arm_bytecode(mem, word, body);
    return out;
  }
  if (auto body = body_words_.find(s.addr); body != body_words_.end()) {
    if (dir == Direction::Forward) on_compiled(s, body->second);
    return out;
  }
  if (sites_) {
    // A bound site's own word, read (arm_sites): its byte code fetched, or its statement's
    // srcref read by the evaluator.
    auto same_point = [&](const std::optional<std::pair<StopInfo, Registers>>& p) {
      if (!p || p->first.event != s.event || p->first.tid != s.tid) return false;
      try {
        return registers_equal(tl_.registers(s.tid), p->second);
      } catch (const Error&) {
        return false;
      }
    };
    if (same_point(skip_)) {
      skip_.reset();  // the read that led to the landing the run went back from
      return out;
    }
    uint64_t site = 0;
    for (const auto& [st, word] : site_word_)
      if (word == s.addr) site = st;
    if (!site) return out;
    bool exists = false;
    try {
      exists = mem.u64(s.addr) == site_content_[s.addr];
    } catch (const InterpReadError&) {
    }
    if (!exists) {
      // Before its code was made (the memory held something else, read by its owner or the
      // collector): no earlier run of it either. Its watchpoint goes; with none left the
      // run goes back unwatched.
      tl_.remove_watchpoint(s.addr, 8, WatchKind::ReadWrite);
      armed_.erase(
          std::remove(armed_.begin(), armed_.end(), std::make_pair(s.addr, WatchKind::ReadWrite)),
          armed_.end());
      return out;
    }
    if (site == s.addr) {  // byte code: bcEval's fetch names it as the frame's pc
      try {
        if (mem.u64(mem.u64(g.bcpc)) != s.addr) return out;
      } catch (const InterpReadError&) {
        return out;
      }
      if (at_start(s.tid)) {
        start_.reset();
        return out;
      }
      arrive(site, mem, out);
    } else {
      // do_begin reads it (through getSrcref); the collector and R code reading srcrefs
      // (the compiler) read it elsewhere.
      Registers regs = tl_.registers(s.tid);
      if (!r->may_start_statement(regs.rip)) return out;
      if (dir == Direction::Backward) skip_ = std::make_pair(s, regs);
      std::optional<StopInfo> landed = land_statement(s, site);
      if (!landed) return out;
      if (at_start(s.tid)) {
        start_.reset();
        return out;
      }
      TimelineTarget lt(tl_, s.tid);
      InterpMemory lmem(lt);
      arrive(site, lmem, out);
      if (!out.ids.empty() || !out.error.empty()) {
        report_hit(out, *landed, site);
      }
      return out;
    }
    if (!out.ids.empty() || !out.error.empty()) report_hit(out, s, site);
    return out;
  }
  if (s.addr == g.srcref) {
    uint64_t value = word_value(s.new_value);
    if (!bound_.count(value)) {
      if (!seen_.try_emplace(value, 0).second) return out;
      std::string file = r->srcref_file(mem, value);
      if (file.empty() || (!wanted(file) && !functions_pending())) return out;
      discover(mem);
      if (!bound_.count(value)) {
        // Top-level code of a sourced file (in no function): bound as it runs.
        RCode& top = codes_[value];
        top.file = file;
        top.starts[r->srcref_line(mem, value)].push_back(value);
        bind_all();
        if (!bound_.count(value)) return out;
      }
    }
    if (!r->starts_statement(mem, value, word_value(s.old_value))) return out;
    at = value;
  } else if (third_ && s.addr == third_) {
    if (third_kind_ == WatchKind::ReadWrite) {
      // bcEval's fetch: the innermost frame's pc names this word (set just before).
      try {
        if (mem.u64(mem.u64(g.bcpc)) != s.addr) return out;
      } catch (const InterpReadError&) {
        return out;
      }
      at = s.addr;
    } else {
      at = word_value(s.new_value);
      if (!bound_.count(at)) return out;
    }
  } else {
    return out;
  }
  if (dir == Direction::Backward && at_start(s.tid)) {
    start_.reset();  // the hit the resume began at
    return out;
  }
  arrive(at, mem, out);
  if (!out.ids.empty() || !out.error.empty()) report_hit(out, s, at);
  return out;
}

}  // namespace rwd
