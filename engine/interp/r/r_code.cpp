// RReader's code reading (r_code.h): the lines of AST and byte-code bodies, and the closures
// a breakpoint may bind in.
#include <unordered_set>

#include "engine/interp/r/r_frames.h"
#include "engine/interp/r/r_objects.h"

namespace rwd {

using namespace r_objects;

namespace {

constexpr size_t kMaxNodes = 200000;  // AST nodes read in one body

/// The first line of `srcref` when it is one (an integer vector of at least 4).
int line_of(RObjects& r, uint64_t srcref) {
  if (r.type(srcref) != kInt || r.length(srcref) < 4) return 0;
  return r.m.i32(srcref + kData);
}

/// The byte code's srcrefs index (the constant whose class is "srcrefsIndex"), or 0.
uint64_t srcrefs_index(RObjects& r, uint64_t consts) {
  int64_t n = r.length(consts);
  for (int64_t i = n - 1; i >= 0; --i) {
    uint64_t c = r.m.u64(consts + kData + 8 * uint64_t(i));
    if (r.type(c) != kInt) continue;
    uint64_t cls = r.attribute(c, "class");
    if (cls && r.first_string(cls) == "srcrefsIndex") return c;
  }
  return 0;
}

}  // namespace

std::string RReader::srcref_file(InterpMemory& mem, uint64_t srcref) const {
  try {
    RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
    if (r.type(srcref) != kInt) return "";
    return r.srcref_file(srcref);
  } catch (const InterpReadError&) {
    return "";
  }
}

int RReader::srcref_line(InterpMemory& mem, uint64_t srcref) const {
  try {
    RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
    return line_of(r, srcref);
  } catch (const InterpReadError&) {
    return 0;
  }
}

std::optional<RCode> RReader::bytecode(InterpMemory& mem, uint64_t body,
                                       const FileFilter& wanted) const {
  try {
    RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
    if (r.type(body) != kBytecode) return std::nullopt;
    uint64_t code = r.car(body), consts = r.cdr(body);
    if (r.type(consts) != kVec) return std::nullopt;
    uint64_t index = srcrefs_index(r, consts);
    if (!index) return std::nullopt;
    RCode out;
    // The file, from the first srcref of the pool (all are the function's file).
    for (int64_t k = 0; k < r.length(consts) && out.file.empty(); ++k) {
      uint64_t c = mem.u64(consts + kData + 8 * uint64_t(k));
      if (line_of(r, c)) out.file = r.srcref_file(c);
    }
    if (out.file.empty() || !wanted(out.file)) return std::nullopt;
    out.bytecode = true;
    int64_t words = r.length(index), nconsts = r.length(consts);
    out.code_begin = code + kData;
    out.code_end = out.code_begin + 8 * uint64_t(words);
    std::map<int32_t, int> lines;  // constant -> its srcref's line
    int previous = 0;
    // Word 0 is the byte-code version; instructions start at word 1.
    for (int64_t i = 1; i < words; ++i) {
      int32_t k = mem.i32(index + kData + 4 * uint64_t(i));
      auto known = lines.find(k);
      if (known == lines.end()) {
        int line = 0;
        if (k >= 0 && k < nconsts) {
          uint64_t srcref = mem.u64(consts + kData + 8 * uint64_t(k));
          line = line_of(r, srcref);
        }
        known = lines.emplace(k, line).first;
      }
      int line = known->second;
      if (line && line != previous && !out.starts.count(line)) {
        uint64_t word = out.code_begin + 8 * uint64_t(i);
        out.starts[line].push_back(word);
        out.words[word] = mem.u64(word);
      }
      previous = line;
    }
    return out;
  } catch (const InterpReadError&) {
    return std::nullopt;
  }
}

std::optional<RCode> RReader::closure_code(InterpMemory& mem, uint64_t closure,
                                           const FileFilter& wanted) const {
  try {
    RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
    if (r.type(closure) != kClosure) return std::nullopt;
    uint64_t body = r.cdr(closure);
    if (r.type(body) == kBytecode) return bytecode(mem, body, wanted);
    uint64_t own = r.attribute(closure, "srcref");
    if (!own) return std::nullopt;
    RCode out;
    out.file = r.srcref_file(own);
    if (out.file.empty() || !wanted(out.file)) return std::nullopt;
    // Every `{` of the body, nested ones (in loops, branches, inner functions) too.
    std::vector<uint64_t> todo = {body};
    std::unordered_set<uint64_t> seen;
    while (!todo.empty() && seen.size() < kMaxNodes) {
      uint64_t node = todo.back();
      todo.pop_back();
      unsigned t = r.type(node);
      if ((t != kLang && t != kList) || !seen.insert(node).second) continue;
      uint64_t head = r.car(node);
      if (t == kLang && r.type(head) == kSym && r.symbol(head) == "{") {
        uint64_t srcrefs = r.attribute(node, "srcref");
        if (srcrefs && r.type(srcrefs) == kVec)
          for (int64_t i = 1; i < r.length(srcrefs); ++i) {
            uint64_t slot = srcrefs + kData + 8 * uint64_t(i);
            uint64_t s = mem.u64(slot);
            if (int line = line_of(r, s)) {
              out.starts[line].push_back(s);
              out.slots[s] = slot;
            }
          }
      }
      todo.push_back(head);
      todo.push_back(r.cdr(node));
    }
    return out;
  } catch (const InterpReadError&) {
    return std::nullopt;
  }
}

std::vector<RReader::NamedClosure> RReader::closures(InterpMemory& mem, size_t limit) const {
  std::vector<NamedClosure> out;
  RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
  auto add = [&](uint64_t v, uint64_t symbol) {
    if (out.size() >= limit) return;
    try {
      if (r.type(v) == kPromise) v = mem.u64(v + kPrValue);
      if (r.type(v) != kClosure) return;
      std::string name;
      if (symbol && r.type(symbol) == kSym) name = r.symbol(symbol);
      out.push_back({v, std::move(name)});
    } catch (const InterpReadError&) {
    }
  };
  // The called function of a context's call: `f(x)`'s f, when a symbol.
  auto called = [&](uint64_t ctx) -> uint64_t {
    try {
      uint64_t call = mem.u64(ctx + kCall);
      return r.type(call) == kLang ? r.car(call) : 0;
    } catch (const InterpReadError&) {
      return 0;
    }
  };
  try {
    uint64_t ctx = mem.u64(g_.global_context);
    for (int n = 0; ctx && n < kMaxContexts; ++n, ctx = mem.u64(ctx + kNextContext)) {
      int flag = mem.i32(ctx + kCallFlag);
      if (flag == 0) break;
      if (flag & kCtxtFunction) add(mem.u64(ctx + kCallFun), called(ctx));
    }
  } catch (const InterpReadError&) {
    // A context in the middle of an update: those read so far.
  }
  try {
    uint64_t env = g_.global_env ? mem.u64(g_.global_env) : 0;
    if (!env || r.type(env) != kEnv) return out;
    // The frame's cells (a pairlist), or each chain of its hash table.
    std::vector<uint64_t> chains;
    uint64_t table = mem.u64(env + kHashTab);
    if (table == g_.nil) {
      chains.push_back(mem.u64(env + kFrame));
    } else {
      int64_t n = r.length(table);
      for (int64_t i = 0; i < n && i < int64_t(kMaxNodes); ++i)
        chains.push_back(mem.u64(table + kData + 8 * uint64_t(i)));
    }
    size_t cells = 0;
    for (uint64_t cell : chains)
      for (; cell != g_.nil && cells < kMaxNodes; cell = r.cdr(cell), ++cells)
        if (!(mem.u64(cell) >> 48)) add(r.car(cell), r.tag(cell));  // not an immediate value
  } catch (const InterpReadError&) {
  }
  return out;
}

std::optional<RReader::NamedClosure> RReader::running_closure(InterpMemory& mem) const {
  try {
    uint64_t ctx = innermost_context(mem);
    if (!ctx) return std::nullopt;
    RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
    NamedClosure out{mem.u64(ctx + kCallFun), {}};
    if (r.type(out.closure) != kClosure) return std::nullopt;
    uint64_t call = mem.u64(ctx + kCall);
    if (r.type(call) == kLang && r.type(r.car(call)) == kSym) out.name = r.symbol(r.car(call));
    return out;
  } catch (const InterpReadError&) {
    return std::nullopt;
  }
}

int RReader::closure_line(InterpMemory& mem, uint64_t closure) const {
  try {
    uint64_t srcref = RObjects{mem, g_.nil, g_.unbound, g_.na_string}.attribute(closure, "srcref");
    return srcref ? srcref_line(mem, srcref) : 0;
  } catch (const InterpReadError&) {
    return 0;
  }
}

uint64_t RReader::closure_body_word(uint64_t closure) {
  return closure + kCdr;
}

uint64_t RReader::closure_body(InterpMemory& mem, uint64_t closure) const {
  return RObjects{mem, g_.nil, g_.unbound, g_.na_string}.cdr(
      closure);  // CLOSXP: formals, body, env
}

std::optional<std::string> RReader::parse_source(InterpMemory& mem) const {
  RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
  bool in_function = false;
  try {
    uint64_t ctx = mem.u64(g_.global_context);
    for (int n = 0; ctx && n < kMaxContexts; ++n, ctx = mem.u64(ctx + kNextContext)) {
      int flag = mem.i32(ctx + kCallFlag);
      if (flag == 0) break;
      if (!(flag & kCtxtFunction)) continue;
      in_function = true;
      uint64_t srcfile = r.env_get(mem.u64(ctx + kCloEnv), "srcfile", srcfile_sym_);
      if (!srcfile) continue;
      if (r.type(srcfile) == kPromise) srcfile = mem.u64(srcfile + kPrValue);
      // The innermost one decides: a parse(text = ...) called from a file being sourced
      // parses code of no file.
      return r.type(srcfile) == kEnv ? r.srcfile_name(srcfile) : std::string();
    }
  } catch (const InterpReadError&) {
    return std::string();
  }
  if (!in_function) return std::nullopt;
  return std::string();
}

}  // namespace rwd
