// RBreakpoints (r_breakpoints.h): finding R code and binding breakpoints to it. Lines bind
// where their statements start in any known code of their file; functions by name at the
// first statement of each known function of that name.
#include <algorithm>

#include "engine/debugger/r_breakpoints.h"
#include "engine/debugger/timeline_target.h"

namespace rwd {

namespace {

constexpr size_t kMaxClosures = 100000;  // closures read when looking for code

/// R's reserved words (R Language Definition §10.3.3, ?Reserved): not names of functions.
constexpr const char* kReserved[] = {
    "if",          "else",     "repeat",        "while",       "function", "for", "next",
    "break",       "TRUE",     "FALSE",         "NULL",        "Inf",      "NaN", "NA",
    "NA_integer_", "NA_real_", "NA_character_", "NA_complex_", "in"};

}  // namespace

bool RBreakpoints::is_r_source(const std::string& path) {
  return path.ends_with(".R") || path.ends_with(".r");
}

bool RBreakpoints::is_r_name(const std::string& name) {
  if (name.empty()) return false;
  auto letter = [](char ch) { return std::isalpha(static_cast<unsigned char>(ch)) || (ch & 0x80); };
  auto digit = [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; };
  if (!letter(name[0]) && name[0] != '.') return false;
  if (name[0] == '.' && name.size() > 1 && digit(name[1])) return false;
  for (char ch : name)
    if (!letter(ch) && !digit(ch) && ch != '.' && ch != '_') return false;
  return std::none_of(std::begin(kReserved), std::end(kReserved),
                      [&](const char* w) { return name == w; });
}

const RReader* RBreakpoints::reader() {
  if (reader_) return &*reader_;
  if (!modules_.function_range("Rf_errorcall").first) return nullptr;  // no libR mapped
  try {
    TimelineTarget t(tl_, tl_.current().tid);
    InterpMemory mem(t);
    reader_ = RReader::find(modules_, mem);
  } catch (const Error&) {
    return nullptr;
  }
  if (reader_ && !reader_->step_globals().srcref) reader_.reset();
  return reader_ ? &*reader_ : nullptr;
}

bool RBreakpoints::wanted(const std::string& file) const {
  return std::any_of(bps_.begin(), bps_.end(), [&](const auto& b) {
    return b.second.spec.function.empty() && same_source_file(b.second.spec.file, file);
  });
}

bool RBreakpoints::names_function(const std::string& name) const {
  return !name.empty() && std::any_of(bps_.begin(), bps_.end(), [&](const auto& b) {
    return b.second.spec.function == name;
  });
}

bool RBreakpoints::has_functions() const {
  return std::any_of(bps_.begin(), bps_.end(),
                     [](const auto& b) { return !b.second.spec.function.empty(); });
}

bool RBreakpoints::functions_pending() const {
  return std::any_of(bps_.begin(), bps_.end(), [](const auto& b) {
    return !b.second.spec.function.empty() && b.second.addrs.empty();
  });
}

uint64_t RBreakpoints::learn(InterpMemory& mem, uint64_t closure, uint64_t body,
                             const std::string& name) {
  const RReader* r = reader();
  uint64_t object = body ? body : closure;
  if (!r || !object) return 0;
  bool named = names_function(name);
  auto known = seen_.find(object);
  if (known != seen_.end() && (known->second || !named)) {
    if (known->second && named) code_names_[known->second].insert(name);
    return known->second;
  }
  auto want = [&](const std::string& file) { return named || wanted(file); };
  std::optional<RCode> c =
      body ? r->bytecode(mem, body, want) : r->closure_code(mem, closure, want);
  uint64_t key = 0;
  if (c) {
    key = c->bytecode ? c->code_begin : closure;
    codes_[key] = std::move(*c);
    if (named) code_names_[key].insert(name);
    if (closure) header_line_[key] = r->closure_line(mem, closure);
  }
  seen_[object] = key;
  return key;
}

uint64_t RBreakpoints::learn_bytecode(InterpMemory& mem, uint64_t body) {
  const RReader* r = reader();
  if (!r || !body) return 0;
  // Met at every bcEval start that runs code not bound (each call of base R's functions):
  // one lookup when seen before (a new function breakpoint clears seen_).
  if (auto known = seen_.find(body); known != seen_.end()) return known->second;
  // A function's byte code runs in its own context: the closure gives it a name and a
  // first line, which only function breakpoints need.
  RReader::NamedClosure owner;
  if (auto c = has_functions() ? r->running_closure(mem) : std::nullopt) try {
      if (r->closure_body(mem, c->closure) == body) owner = *c;
    } catch (const InterpReadError&) {
    }
  return learn(mem, owner.closure, body, owner.name);
}

void RBreakpoints::discover(InterpMemory& mem) {
  const RReader* r = reader();
  if (!r) return;
  for (const RReader::NamedClosure& c : r->closures(mem, kMaxClosures))
    learn(mem, c.closure, 0, c.name);
  try {
    learn_bytecode(mem, r->running_bytecode(mem));
  } catch (const InterpReadError&) {
  }
  bind_all();
}

void RBreakpoints::bind_place(Breakpoint& bp, const RCode& c, uint64_t at, int line) {
  bp.file = c.file;
  bp.line = uint32_t(line);
  bp.addrs.push_back(at);
  bound_[at] = line;
  if (c.bytecode) {
    auto word = c.words.find(at);
    site_word_[at] = at;
    site_content_[at] = word == c.words.end() ? 0 : word->second;
  }
  if (auto slot = c.slots.find(at); slot != c.slots.end()) {
    site_word_[at] = slot->second;
    site_content_[slot->second] = at;
  }
}

bool RBreakpoints::bind(Breakpoint& bp) {
  Breakpoint before = bp;
  bp.addrs.clear();
  bp.line = 0;
  bp.file.clear();
  if (!bp.spec.function.empty()) {
    // Each known function of that name: the first statement of its body (after the line of
    // `function(...) {`, unless all of it is on one line).
    for (const auto& [key, names] : code_names_) {
      if (!names.count(bp.spec.function)) continue;
      const RCode& c = codes_.at(key);
      auto header = header_line_.find(key);
      auto first = c.starts.upper_bound(header == header_line_.end() ? 0 : header->second);
      if (first == c.starts.end()) first = c.starts.begin();
      if (first != c.starts.end()) bind_place(bp, c, first->second.front(), first->first);
    }
  } else {
    // The first line from the requested one where a statement starts, in any known code of
    // the file; bound in each code that has it.
    int first = 0;
    for (const auto& [key, c] : codes_) {
      if (!same_source_file(bp.spec.file, c.file)) continue;
      auto it = c.starts.lower_bound(int(bp.spec.line));
      if (it != c.starts.end() && (!first || it->first < first)) first = it->first;
    }
    for (const auto& [key, c] : codes_) {
      if (!first || !same_source_file(bp.spec.file, c.file)) continue;
      if (auto it = c.starts.find(first); it != c.starts.end())
        for (uint64_t at : it->second) bind_place(bp, c, at, first);
    }
  }
  bp.message = !bp.addrs.empty() ? ""
               : !reader_ ? "no R interpreter is running here yet: the breakpoint binds once R runs"
               : !bp.spec.function.empty()
                   ? "no R function named " + bp.spec.function +
                         " with source lines is known here: the breakpoint binds once R "
                         "defines it in the global environment or calls it (R keeps the lines "
                         "of code it reads with options(keep.source = TRUE))"
                   : "no R code of this file with a statement at or after this line is known "
                     "here: the breakpoint binds when R runs it (R keeps the lines of code "
                     "it reads with options(keep.source = TRUE))";
  std::sort(bp.addrs.begin(), bp.addrs.end());
  bp.addrs.erase(std::unique(bp.addrs.begin(), bp.addrs.end()), bp.addrs.end());
  return bp.addrs != before.addrs || bp.line != before.line || bp.message != before.message;
}

void RBreakpoints::bind_all() {
  std::map<uint64_t, int> before = std::move(bound_);
  bound_.clear();
  site_word_.clear();
  site_content_.clear();
  for (auto& [id, bp] : bps_)
    if (bind(bp) && std::find(rebound_.begin(), rebound_.end(), id) == rebound_.end())
      rebound_.push_back(id);
  if (bound_ != before) ++bound_version_;
}

std::vector<Breakpoint> RBreakpoints::replace(
    const std::function<bool(const Breakpoint&)>& replaced, std::vector<Breakpoint> bps) {
  for (auto it = bps_.begin(); it != bps_.end();)
    it = replaced(it->second) ? bps_.erase(it) : std::next(it);
  for (Breakpoint& bp : bps) bps_[bp.id] = bp;
  seen_.clear();       // what was of no interest may be now
  bool bound = false;  // discover() binds all as it ends
  if (reader()) {
    try {
      TimelineTarget t(tl_, tl_.current().tid);
      InterpMemory mem(t);
      discover(mem);
      bound = true;
    } catch (const Error&) {
    }
  }
  if (!bound) bind_all();
  std::vector<Breakpoint> out;
  for (const Breakpoint& bp : bps) {
    out.push_back(bps_[bp.id]);
    rebound_.erase(std::remove(rebound_.begin(), rebound_.end(), bp.id), rebound_.end());
  }
  return out;
}

const Breakpoint* RBreakpoints::find(int id) const {
  auto it = bps_.find(id);
  return it == bps_.end() ? nullptr : &it->second;
}

bool RBreakpoints::code_exists_here() {
  try {
    TimelineTarget t(tl_, tl_.current().tid);
    InterpMemory mem(t);
    for (const auto& [word, content] : site_content_) try {
        if (content && mem.u64(word) == content) return true;
      } catch (const InterpReadError&) {
      }
  } catch (const Error&) {
  }
  return false;
}

bool RBreakpoints::all_pending() const {
  return std::all_of(bps_.begin(), bps_.end(),
                     [](const auto& b) { return b.second.addrs.empty(); });
}

}  // namespace rwd
