#include "engine/interp/r/r_frames.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>

#include "engine/interp/r/r_bytecode_globals.h"
#include "engine/interp/r/r_objects.h"

namespace rwd {

using namespace r_objects;

namespace {

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
  g.global_env = data_symbol_address(modules, "R_GlobalEnv");
  // R_FunTab (names.c): FUNTAB entries {name, cfun, code, eval, arity, gram (12 bytes)},
  // 40 bytes each, ended by a null name.
  if (uint64_t table = data_symbol_address(modules, "R_FunTab")) try {
      for (uint64_t e = table; e < table + 40 * 2000; e += 40) {
        uint64_t name = mem.u64(e);
        if (!name) break;
        auto b = mem.bytes(name, 2);
        if (b[0] == '{' && b[1] == 0) {
          g.block_reads = r_block_code_ranges(mem, mem.u64(e + 8));
          break;
        }
      }
    } catch (const InterpReadError&) {
    }
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
  g.opcodes = find_r_opcode_table(modules, mem);
  if (bc.srcref == g.srcref) {
    g.bcpc = bc.pc;
    g.bcbody = bc.body;
    g.srcref_field = bc.srcref_field;
  }
  return RReader(g);
}

std::vector<InterpFrame> RReader::stack(InterpMemory& mem, size_t with_locals) const {
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

bool RReader::return_values_known(InterpMemory& mem) const {
  return srcref_field(mem) == kSrcref40;
}

std::optional<std::string> RReader::returned_value(InterpMemory& mem, uint64_t ctx) const {
  if (!return_values_known(mem)) return std::nullopt;
  try {
    uint64_t value = mem.u64(ctx + kSrcref40 + 16);  // after srcref and browserfinish
    if (!value) return std::nullopt;
    RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
    std::string type;
    return r.format(value, type);
  } catch (const InterpReadError& e) {
    return std::string("<unreadable: ") + e.what() + ">";
  }
}

uint64_t RReader::call_environment(InterpMemory& mem, uint64_t ctx) const {
  return mem.u64(ctx + kCloEnv);
}

int RReader::srcref_field(InterpMemory& mem) const {
  if (g_.srcref_field) return g_.srcref_field;
  bool valid = true;
  walk(mem, kSrcref40, valid, 0);
  return valid ? kSrcref40 : kSrcref44;
}

bool RReader::starts_statement(InterpMemory& mem, uint64_t value, uint64_t before) const {
  try {
    RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
    // Before R_InBCInterpreter: a bcEval ending puts back what it replaced as it began.
    if (value == before || before == g_.in_bc || value == g_.nil || value == g_.in_bc ||
        r.type(value) != kInt)
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
                                       size_t with_locals) const {
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
      if (out.size() < with_locals && r.type(env) == kEnv) {
        // The closure's formals (a pairlist tagged by the parameters' names) tell its
        // arguments from the locals it made.
        std::vector<std::string> formals;
        uint64_t closure = mem.u64(ctx + kCallFun);
        if (r.type(closure) == kClosure)
          for (uint64_t cell = r.car(closure); cell != g_.nil && formals.size() < kMaxFormals;
               cell = r.cdr(cell))
            formals.push_back(r.symbol(r.tag(cell)));
        for (uint64_t cell = mem.u64(env + kFrame); cell != g_.nil; cell = r.cdr(cell)) {
          InterpVariable v;
          v.name = r.symbol(r.tag(cell));
          v.argument = std::find(formals.begin(), formals.end(), v.name) != formals.end();
          r.binding(cell, v);
          f.locals.push_back(std::move(v));
        }
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
