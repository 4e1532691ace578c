// Reading GNU R 4.x objects (SEXPREC, Defn.h with USE_RINTERNALS; docs/interpreter-frames.md
// §2.3) out of a stopped interpreter's memory, every pointer checked: what the R stack reader
// (r_frames.h) and the code reader (r_code.cpp) share. Internal to engine/interp/r.
#pragma once

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "engine/interp/interp_frame.h"

namespace rwd::r_objects {

// SEXPREC (Defn.h, USE_RINTERNALS; §2.3): a 64-bit sxpinfo, then attrib; node payloads at +32.
constexpr int kAttrib = 8, kCar = 32, kCdr = 40, kTag = 48;
constexpr int kPrintName = 32, kFrame = 32, kEnclos = 40, kHashTab = 48;
constexpr int kPrValue = 32, kPrCode = 40, kPrEnv = 48;  // PROMSXP
constexpr int kLength = 32, kData = 48;                  // vectors (not ALTREP)
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
  kCplx = 15,
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
/// The most formals read of one closure (a corrupt or cyclic pairlist ends there).
constexpr size_t kMaxFormals = 4096;

/// Reads R objects with every pointer checked (InterpReadError on a bad one).
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
    uint64_t sym = 0;
    return env_get(env, name, sym);
  }
  /// The binding chains (pairlists) of environment `env`: its frame, or each bucket of its
  /// hash table (at most 100,000).
  std::vector<uint64_t> frame_chains(uint64_t env) {
    std::vector<uint64_t> chains;
    uint64_t table = m.u64(env + kHashTab);
    if (table == nil) {
      chains.push_back(m.u64(env + kFrame));
    } else {
      int64_t n = length(table);
      for (int64_t i = 0; i < n && i < 100000; ++i)
        chains.push_back(m.u64(table + kData + 8 * uint64_t(i)));
    }
    return chains;
  }
  /// The value bound to the symbol named `name` in environment `env`'s own frame or hash
  /// table, or 0, as env_get; `sym` caches that symbol's address (R's symbols are unique and
  /// never move): 0 at first, set once a binding shows it, then tags are compared by address
  /// instead of by name (a read or two less per binding).
  uint64_t env_get(uint64_t env, const std::string& name, uint64_t& sym) {
    if (type(env) != kEnv) return 0;
    for (uint64_t cell : frame_chains(env))
      for (int k = 0; cell != nil && k < 100000; ++k, cell = cdr(cell)) {
        uint64_t t = tag(cell);
        if (sym ? t != sym : (t == nil || symbol(t) != name)) continue;
        sym = t;
        return car(cell);
      }
    return 0;
  }
  /// The cell binding symbol `sym` in `env` or the environments it encloses in (at most
  /// 1,000 deep), or 0: frames and hash tables only (base R's own bindings, kept in the
  /// symbols, are not looked at).
  uint64_t lookup(uint64_t env, uint64_t sym) {
    for (int depth = 0; depth < 1000 && type(env) == kEnv; ++depth, env = m.u64(env + kEnclos)) {
      for (uint64_t cell : frame_chains(env))
        for (int k = 0; cell != nil && k < 100000; ++k, cell = cdr(cell))
          if (tag(cell) == sym) return cell;
    }
    return 0;
  }
  /// The expression of promise `p` (its byte code's expression, constant 0, when compiled).
  uint64_t promise_code(uint64_t p) {
    uint64_t code = m.u64(p + kPrCode);
    if (type(code) != kBytecode) return code;
    uint64_t consts = cdr(code);
    return type(consts) == kVec && length(consts) >= 1 ? m.u64(consts + kData) : 0;
  }
  /// Fills `v`'s type and value from binding cell `cell`: an immediate (BNDCELL) number or
  /// a value. A promise shows its value once forced; before, what forcing it would give when
  /// that runs no code: a constant, or a symbol's binding in the promise's environment (a
  /// call's argument written as a variable); else "<promise: not evaluated yet>". A read
  /// error is shown in the value.
  void binding(uint64_t cell, InterpVariable& v, int depth = 0) {
    try {
      unsigned immediate = unsigned(m.u64(cell) >> 48);  // BNDCELL_TAG: a raw value
      if (immediate == kReal) {
        v.type = "numeric";
        v.value = real(m.f64(cell + kCar));
        return;
      }
      if (immediate == kInt || immediate == kLogical) {
        int32_t x = m.i32(cell + kCar);
        v.type = immediate == kInt ? "integer" : "logical";
        v.value = x == INT_MIN        ? "NA"
                  : immediate == kInt ? std::to_string(x) + "L"
                  : x                 ? "TRUE"
                                      : "FALSE";
        return;
      }
      uint64_t value = car(cell);
      if (type(value) == kPromise && m.u64(value + kPrValue) != unbound) {
        value = m.u64(value + kPrValue);
      } else if (type(value) == kPromise) {
        uint64_t code = promise_code(value);
        unsigned t = code ? type(code) : kNil;
        uint64_t bound = t == kSym && depth < 8 ? lookup(m.u64(value + kPrEnv), code) : 0;
        if (bound && car(bound) != unbound) return binding(bound, v, depth + 1);
        if (t != kLogical && t != kInt && t != kReal && t != kStr) {
          v.type = "promise";
          v.value = "<promise: not evaluated yet>";
          return;
        }
        value = code;
      }
      v.value = format(value, v.type);
    } catch (const InterpReadError& e) {
      v.value = std::string("<unreadable: ") + e.what() + ">";
    }
  }
  std::string first_string(uint64_t v) {
    if (type(v) != kStr || length(v) < 1) return "";
    return chars(m.u64(v + kData));
  }
  /// The file a srcref points into ("" when none).
  std::string srcref_file(uint64_t srcref) {
    uint64_t srcfile = attribute(srcref, "srcfile");
    return srcfile ? srcfile_name(srcfile) : "";
  }
  /// The file a srcfile environment names: its `filename`, under its `wd` when relative.
  std::string srcfile_name(uint64_t srcfile) {
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

}  // namespace rwd::r_objects
