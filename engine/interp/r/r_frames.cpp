#include "engine/interp/r/r_frames.h"

#include <climits>
#include <cmath>
#include <cstring>
#include <functional>

#include "engine/interp/r/r_bytecode_globals.h"

namespace rwd {

namespace {

// SEXPREC (Defn.h, USE_RINTERNALS; §2.3): a 64-bit sxpinfo, then attrib; node payloads at +32.
constexpr int kAttrib = 8, kCar = 32, kCdr = 40, kTag = 48;
constexpr int kPrintName = 32, kFrame = 32, kHashTab = 48, kPrValue = 32;
constexpr int kLength = 32, kData = 48;  // vectors (not ALTREP)
enum : unsigned {
  kNil = 0,
  kSym = 1,
  kList = 2,
  kClosure = 3,
  kEnv = 4,
  kPromise = 5,
  kLang = 6,
  kChar = 9,
  kLogical = 10,
  kInt = 13,
  kReal = 14,
  kStr = 16,
  kVec = 19,
  kBytecode = 21
};
// RCNTXT (§2.2, glibc x86-64): the fields before srcref are where both 4.0-4.3 and 4.4+
// have them; srcref is at 368 (4.0-4.3) or 384 (4.4+, after relpc and bcframe).
constexpr int kNextContext = 0, kCallFlag = 8, kCallFun = 232, kCall = 248, kCloEnv = 256,
              kBcBody = 312, kBcPc = 320, kRelPc44 = 328;
constexpr int kSrcref40 = 368, kSrcref44 = 384;
constexpr int kCtxtFunction = 4;  // CTXT_FUNCTION (CTXT_RETURN = 12 includes it)
constexpr int kMaxContexts = 100000;

/// Reads R objects with every pointer checked.
struct RObjects {
  InterpMemory& m;
  uint64_t nil, unbound, na_string;

  unsigned type(uint64_t s) { return unsigned(m.u64(s) & 31); }
  bool altrep(uint64_t s) { return (m.u64(s) >> 7) & 1; }
  uint64_t car(uint64_t s) { return m.u64(s + kCar); }
  uint64_t cdr(uint64_t s) { return m.u64(s + kCdr); }
  uint64_t tag(uint64_t s) { return m.u64(s + kTag); }
  int64_t length(uint64_t v) {
    int64_t n = m.i64(v + kLength);
    if (n < 0 || n > (int64_t(1) << 40)) throw InterpReadError("a vector with a bad length");
    return n;
  }
  std::string chars(uint64_t c) {
    if (type(c) != kChar) throw InterpReadError("not a CHARSXP");
    auto b = m.bytes(c + kData, size_t(std::min<int64_t>(length(c), 4096)));
    return std::string(b.begin(), b.end());
  }
  std::string symbol(uint64_t s) {
    if (type(s) != kSym) throw InterpReadError("not a symbol");
    return chars(m.u64(s + kPrintName));
  }
  /// The value tagged `name` in a pairlist, or 0.
  uint64_t pairlist_get(uint64_t list, const std::string& name) {
    for (int n = 0; list != nil && n < 100000; ++n, list = cdr(list))
      if (tag(list) != nil && symbol(tag(list)) == name) return car(list);
    return 0;
  }
  uint64_t attribute(uint64_t s, const std::string& name) {
    return pairlist_get(m.u64(s + kAttrib), name);
  }
  /// `name` bound in environment `env` (its frame, or its hash table), or 0.
  uint64_t env_get(uint64_t env, const std::string& name) {
    if (type(env) != kEnv) return 0;
    uint64_t table = m.u64(env + kHashTab);
    if (table == nil) return pairlist_get(m.u64(env + kFrame), name);
    int64_t n = length(table);
    for (int64_t i = 0; i < n && i < 100000; ++i)
      if (uint64_t v = pairlist_get(m.u64(table + kData + 8 * uint64_t(i)), name)) return v;
    return 0;
  }
  std::string first_string(uint64_t v) {
    if (type(v) != kStr || length(v) < 1) return "";
    return chars(m.u64(v + kData));
  }
  /// The file a srcref points into ("" when none).
  std::string srcref_file(uint64_t srcref) {
    uint64_t srcfile = attribute(srcref, "srcfile");
    if (!srcfile) return "";
    std::string file = first_string(env_get(srcfile, "filename"));
    if (file.empty() || file[0] == '/') return file;
    std::string wd = first_string(env_get(srcfile, "wd"));
    return wd.empty() ? file : wd + "/" + file;
  }
  /// One element of an atomic vector as R would show it.
  std::string element(unsigned t, uint64_t v, int64_t i) {
    switch (t) {
      case kLogical: {
        int32_t x = m.i32(v + kData + 4 * uint64_t(i));
        return x == INT_MIN ? "NA" : x ? "TRUE" : "FALSE";
      }
      case kInt: {
        int32_t x = m.i32(v + kData + 4 * uint64_t(i));
        return x == INT_MIN ? "NA" : std::to_string(x) + "L";
      }
      case kReal:
        return real(m.f64(v + kData + 8 * uint64_t(i)));
      case kStr: {
        uint64_t c = m.u64(v + kData + 8 * uint64_t(i));
        return c == na_string ? "NA" : "\"" + chars(c) + "\"";
      }
    }
    return "?";
  }
  static std::string real(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    if (std::isnan(d)) return (bits & 0xffffffff) == 1954 ? "NA" : "NaN";  // R's NA_real_
    if (std::isinf(d)) return d > 0 ? "Inf" : "-Inf";
    char buf[40];
    snprintf(buf, sizeof buf, "%.15g", d);
    return buf;
  }
  static const char* type_name(unsigned t) {
    switch (t) {
      case kNil:
        return "NULL";
      case kLogical:
        return "logical";
      case kInt:
        return "integer";
      case kReal:
        return "numeric";
      case kStr:
        return "character";
      case kVec:
        return "list";
      case kClosure:
        return "function";
      case kEnv:
        return "environment";
      case kLang:
        return "call";
      case kSym:
        return "name";
    }
    return "object";
  }
  /// A vector of `n` elements as shown inline: its first five from `at`.
  static std::string elements(int64_t n, const std::string& type_out,
                              const std::function<std::string(int64_t)>& at) {
    if (n == 0) return type_out + "(0)";
    if (n == 1) return at(0);
    std::string out = "c(";
    for (int64_t i = 0; i < std::min<int64_t>(n, 5); ++i) out += (i ? ", " : "") + at(i);
    return out + (n > 5 ? ", ...)" : ")") + " [" + std::to_string(n) + "]";
  }
  /// The class of an ALTREP object ("compact_intseq"...): the first element of its class's
  /// attributes (R's altrep.c: ALTREP_CLASS is the TAG, a raw vector whose ATTRIB is
  /// list(class symbol, package symbol, type)).
  std::string altrep_class(uint64_t v) {
    uint64_t attrib = m.u64(tag(v) + kAttrib);
    return type(attrib) == kList ? symbol(car(attrib)) : "";
  }
  /// An ALTREP vector (R >= 3.5): 1:n and seq_len() are compact sequences whose data1 is
  /// c(length, first, step) (altclasses.c), wrappers hold the vector in data1, a deferred
  /// string keeps its expansion in data2 once made; others show their class.
  std::string format_altrep(uint64_t v, unsigned t, std::string& type_out) {
    std::string cls = altrep_class(v);
    uint64_t d1 = car(v), d2 = cdr(v);
    if ((cls == "compact_intseq" || cls == "compact_realseq") && type(d1) == kReal &&
        length(d1) == 3) {
      double n = m.f64(d1 + kData), first = m.f64(d1 + kData + 8), step = m.f64(d1 + kData + 16);
      if (!(n >= 0 && n <= double(int64_t(1) << 40)))
        throw InterpReadError("a compact sequence with a bad length");
      return elements(int64_t(n), type_out, [&](int64_t i) {
        double x = first + step * double(i);
        return t == kInt ? std::to_string(int64_t(x)) + "L" : real(x);
      });
    }
    if (cls.rfind("wrap_", 0) == 0 && type(d1) == t && !altrep(d1)) return format(d1, type_out);
    if (cls == "deferred_string" && type(d2) == kStr && !altrep(d2)) return format(d2, type_out);
    return "<" + type_out + " vector (ALTREP " + (cls.empty() ? "?" : cls) + ")>";
  }
  /// A value as a debugger shows it inline.
  std::string format(uint64_t v, std::string& type_out) {
    unsigned t = type(v);
    type_out = type_name(t);
    if (t == kNil) return "NULL";
    if (t == kLogical || t == kInt || t == kReal || t == kStr) {
      if (altrep(v)) return format_altrep(v, t, type_out);
      return elements(length(v), type_out, [&](int64_t i) { return element(t, v, i); });
    }
    if (t == kVec) return "list of " + std::to_string(length(v));
    if (t == kSym) return symbol(v).empty() ? "<missing>" : symbol(v);
    return "<" + type_out + ">";
  }
};

/// The function name of a call as Rprof writes it: f, pkg::f, pkg:::f, x$f, else <Anonymous>.
std::string call_name(RObjects& r, uint64_t call) {
  if (r.type(call) != kLang) return "<Anonymous>";
  uint64_t fun = r.car(call);
  if (r.type(fun) == kSym) return r.symbol(fun);
  if (r.type(fun) == kLang && r.type(r.car(fun)) == kSym) {
    std::string op = r.symbol(r.car(fun));
    uint64_t args = r.cdr(fun);
    if ((op == "::" || op == ":::" || op == "$") && args != r.nil && r.cdr(args) != r.nil) {
      uint64_t lhs = r.car(args), rhs = r.car(r.cdr(args));
      if (r.type(lhs) == kSym && r.type(rhs) == kSym) return r.symbol(lhs) + op + r.symbol(rhs);
    }
  }
  return "<Anonymous>";
}

}  // namespace

std::optional<RReader> RReader::find(const ModuleList& modules, InterpMemory& mem) {
  Globals g;
  g.global_context = data_symbol_address(modules, "R_GlobalContext");
  uint64_t nil = data_symbol_address(modules, "R_NilValue"),
           unbound = data_symbol_address(modules, "R_UnboundValue"),
           in_bc = data_symbol_address(modules, "R_InBCInterpreter"),
           na = data_symbol_address(modules, "R_NaString");
  g.srcref = data_symbol_address(modules, "R_Srcref");
  if (!g.global_context || !nil || !unbound || !in_bc || !g.srcref) return std::nullopt;
  try {
    g.nil = mem.u64(nil);
    g.unbound = mem.u64(unbound);
    g.in_bc = mem.u64(in_bc);
    g.na_string = na ? mem.u64(na) : 0;
  } catch (const InterpReadError&) {
    return std::nullopt;  // libR is being loaded: its data is not mapped yet
  }
  // Not initialized yet: R sets these globals one after the other as it starts (InitMemory,
  // then InitNames for the unbound value and the byte-code marker), and a reader made from
  // a zero would misread every later stack.
  if (!g.nil || !g.unbound || !g.in_bc || (na && !g.na_string)) return std::nullopt;
  // The analysis of Rf_begincontext is trusted when it also found the exported R_Srcref.
  RBytecodeGlobals bc = find_r_bytecode_globals(modules, mem);
  if (bc.srcref == g.srcref) {
    g.bcpc = bc.pc;
    g.bcbody = bc.body;
    g.srcref_field = bc.srcref_field;
  }
  return RReader(g);
}

std::vector<InterpFrame> RReader::stack(InterpMemory& mem, bool with_locals) const {
  if (g_.srcref_field) {
    bool valid = true;
    return walk(mem, g_.srcref_field, valid, with_locals);
  }
  bool valid = true;
  std::vector<InterpFrame> frames = walk(mem, kSrcref40, valid, with_locals);
  if (valid) return frames;
  bool valid44 = true;
  std::vector<InterpFrame> frames44 = walk(mem, kSrcref44, valid44, with_locals);
  return valid44 ? frames44 : frames;
}

uint64_t RReader::innermost_context(InterpMemory& mem) const {
  uint64_t ctx = mem.u64(g_.global_context);
  for (int n = 0; ctx && n < kMaxContexts; ++n, ctx = mem.u64(ctx + kNextContext)) {
    int flag = mem.i32(ctx + kCallFlag);
    if (flag == 0) break;
    if (flag & kCtxtFunction) return ctx;
  }
  return 0;
}

bool RReader::returning(InterpMemory& mem, uint64_t value) const {
  try {
    uint64_t ctx = innermost_context(mem);
    return ctx && mem.u64(ctx + srcref_field(mem)) == value;
  } catch (const InterpReadError&) {
    return false;
  }
}

RReader::ContextInfo RReader::context_info(InterpMemory& mem, uint64_t ctx) const {
  ContextInfo out;
  try {
    RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
    out.next = mem.u64(ctx + kNextContext);
    out.function = (mem.i32(ctx + kCallFlag) & kCtxtFunction) != 0;
    uint64_t fun = mem.u64(ctx + kCallFun);
    out.has_source = out.function && r.type(fun) == kClosure && r.attribute(fun, "srcref");
  } catch (const InterpReadError&) {
    return ContextInfo{};
  }
  return out;
}

int RReader::srcref_field(InterpMemory& mem) const {
  if (g_.srcref_field) return g_.srcref_field;
  bool valid = true;
  walk(mem, kSrcref40, valid, false);
  return valid ? kSrcref40 : kSrcref44;
}

bool RReader::starts_statement(InterpMemory& mem, uint64_t value, uint64_t before) const {
  try {
    RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
    if (value == before || value == g_.nil || value == g_.in_bc || r.type(value) != kInt)
      return false;
    // A restore: the srcref a context saved as it began (a loop's, a call's as it returns, a
    // caller's put back around code without srcrefs), put back as it ends.
    int field = srcref_field(mem);
    uint64_t function = 0;
    uint64_t ctx = mem.u64(g_.global_context);
    for (int n = 0; ctx && n < kMaxContexts; ++n, ctx = mem.u64(ctx + kNextContext)) {
      int flag = mem.i32(ctx + kCallFlag);
      if (flag == 0) break;  // the top level
      if (mem.u64(ctx + field) == value) return false;
      if ((flag & kCtxtFunction) && !function) function = ctx;
    }
    if (!function) return true;  // top-level code
    uint64_t fun = mem.u64(function + kCallFun);
    return r.type(fun) != kClosure || r.attribute(fun, "srcref") != value;
  } catch (const InterpReadError&) {
    return false;
  }
}

std::vector<InterpFrame> RReader::walk(InterpMemory& mem, int srcref_at, bool& valid,
                                       bool with_locals) const {
  RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
  std::vector<InterpFrame> out;
  // Lines: frame k is at the srcref its callee's context saved (begincontext copies R_Srcref);
  // the innermost frame is at R_Srcref.
  auto resolve = [&](uint64_t srcref, uint64_t ctx, InterpFrame& f) {
    if (srcref == g_.in_bc) {
      // The byte code and its pc: those the callee's context saved, or R's globals for the
      // innermost frame.
      if (!ctx && !g_.bcpc) return;
      uint64_t body = mem.u64(ctx ? ctx + kBcBody : g_.bcbody);
      if (r.type(body) != kBytecode) return;
      // Other byte code than the frame's closure's (a promise's, forced under this frame,
      // whose srcrefs are its creator's): this frame's own pc is not known.
      uint64_t closure = mem.u64(f.address + kCallFun);
      if (r.type(closure) != kClosure || r.cdr(closure) != body) return;
      uint64_t code = r.car(body), consts = r.cdr(body);
      // bcpc: the address of that bcEval's currentpc (R >= 4.4 also saves the relative pc).
      uint64_t pc_at = mem.u64(ctx ? ctx + kBcPc : g_.bcpc);
      f.step_word = pc_at;
      int64_t relpc = 0;
      if (ctx && srcref_at == kSrcref44) relpc = mem.i64(ctx + kRelPc44);
      if (relpc <= 0) {
        if (!pc_at) return;
        relpc = int64_t(mem.u64(pc_at) - (code + kData)) / 8;
      }
      int64_t n = r.length(consts);
      for (int64_t i = n - 1; i >= 0; --i) {
        uint64_t c = mem.u64(consts + kData + 8 * uint64_t(i));
        if (r.type(c) != kInt) continue;
        uint64_t cls = r.attribute(c, "class");
        if (!cls || r.first_string(cls) != "srcrefsIndex") continue;
        if (relpc < 0 || relpc >= r.length(c)) return;
        int32_t k = mem.i32(c + kData + 4 * uint64_t(relpc));
        if (k < 0 || k >= n) return;
        srcref = mem.u64(consts + kData + 8 * uint64_t(k));
        break;
      }
      if (srcref == g_.in_bc) return;
    }
    if (srcref != g_.in_bc && !f.step_word) f.step_word = g_.srcref;
    if (srcref == g_.nil || r.type(srcref) != kInt || r.length(srcref) < 4) return;
    f.line = mem.i32(srcref + kData);
    f.file = r.srcref_file(srcref);
  };
  uint64_t inner_srcref = mem.u64(g_.srcref), inner_ctx = 0;
  uint64_t ctx = mem.u64(g_.global_context);
  for (int n = 0; ctx && n < kMaxContexts; ++n, ctx = mem.u64(ctx + kNextContext)) {
    int flag = mem.i32(ctx + kCallFlag);
    if (flag == 0) break;  // the top level
    uint64_t saved = mem.u64(ctx + srcref_at);
    if (saved != g_.nil && saved != g_.in_bc && r.type(saved) != kInt) {
      valid = false;
      return out;
    }
    if (!(flag & kCtxtFunction)) continue;
    InterpFrame f;
    f.language = "r";
    f.address = ctx;
    try {
      f.function = call_name(r, mem.u64(ctx + kCall));
      resolve(inner_srcref, inner_ctx, f);
      uint64_t env = mem.u64(ctx + kCloEnv);
      if (with_locals && r.type(env) == kEnv)
        for (uint64_t cell = mem.u64(env + kFrame); cell != g_.nil; cell = r.cdr(cell)) {
          InterpVariable v;
          v.name = r.symbol(r.tag(cell));
          try {
            unsigned immediate = unsigned(mem.u64(cell) >> 48);  // BNDCELL_TAG: a raw value
            if (immediate == kReal) {
              v.type = "numeric";
              v.value = RObjects::real(mem.f64(cell + kCar));
            } else if (immediate == kInt || immediate == kLogical) {
              int32_t x = mem.i32(cell + kCar);
              v.type = immediate == kInt ? "integer" : "logical";
              v.value = x == INT_MIN        ? "NA"
                        : immediate == kInt ? std::to_string(x) + "L"
                        : x                 ? "TRUE"
                                            : "FALSE";
            } else {
              uint64_t value = r.car(cell);
              if (r.type(value) == kPromise) {
                uint64_t forced = mem.u64(value + kPrValue);
                if (forced == g_.unbound) {
                  v.type = "promise";
                  v.value = "<promise: not evaluated yet>";
                  f.locals.push_back(v);
                  continue;
                }
                value = forced;
              }
              v.value = r.format(value, v.type);
            }
          } catch (const InterpReadError& e) {
            v.value = std::string("<unreadable: ") + e.what() + ">";
          }
          f.locals.push_back(std::move(v));
        }
    } catch (const InterpReadError& e) {
      f.error = std::string("frame unavailable: ") + e.what();
      out.push_back(f);
      return out;
    }
    out.push_back(std::move(f));
    inner_srcref = saved;
    inner_ctx = ctx;
  }
  return out;
}

}  // namespace rwd
