// The binding of an R local in one call, for its history (r_frames.h: local_binding and the
// words an assignment, a new local and a new call write). GNU R 4.x, Defn.h's SEXPREC and
// RCNTXT layouts (docs/interpreter-frames.md §2).
#include <string>

#include "engine/errors.h"
#include "engine/interp/r/r_frames.h"
#include "engine/interp/r/r_objects.h"

namespace rwd {

using namespace r_objects;

RReader::LocalBinding RReader::local_binding(InterpMemory& mem, uint64_t ctx,
                                             const std::string& name, bool unbound_too) const {
  RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
  LocalBinding b;
  b.env = call_environment(mem, ctx);
  if (r.type(b.env) != kEnv) throw InterpReadError("the call's environment is not one");
  if (mem.u64(b.env + kHashTab) != g_.nil)
    throw Error("\"" + name + "\" cannot be followed: its call keeps its locals in a hash table");
  uint64_t cell = mem.u64(b.env + kFrame);
  for (int k = 0; cell != g_.nil && k < 100000; ++k, cell = r.cdr(cell)) {
    uint64_t tag = r.tag(cell);
    if (tag != g_.nil && r.symbol(tag) == name) {
      b.cell = cell;
      return b;
    }
  }
  if (unbound_too) return b;
  throw Error("\"" + name + "\" is not a local variable of this R call (not bound in it here)");
}

bool RReader::binding_named(InterpMemory& mem, uint64_t cell, const std::string& name) const {
  try {
    RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
    uint64_t tag = r.tag(cell);
    return r.type(tag) == kSym && r.symbol(tag) == name;
  } catch (const InterpReadError&) {
    return false;
  }
}

uint64_t RReader::binding_value_word(uint64_t cell) {
  return cell + kCar;
}

uint64_t RReader::env_frame_word(uint64_t env) {
  return env + kFrame;
}

uint64_t RReader::context_env_word(uint64_t ctx) {
  return ctx + kCloEnv;
}

bool RReader::binds(InterpMemory& mem, uint64_t env, uint64_t cell) const {
  try {
    RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
    uint64_t c = mem.u64(env + kFrame);
    for (int k = 0; c != g_.nil && k < 100000; ++k, c = r.cdr(c))
      if (c == cell) return r.type(r.tag(cell)) == kSym;
  } catch (const InterpReadError&) {
  }
  return false;
}

bool RReader::call_running(InterpMemory& mem, uint64_t ctx, uint64_t env) const {
  try {
    uint64_t c = mem.u64(g_.global_context);
    for (int n = 0; c && n < kMaxContexts; ++n, c = mem.u64(c + kNextContext)) {
      int flag = mem.i32(c + kCallFlag);
      if (flag == 0) break;  // the top level
      if (c == ctx) return (flag & kCtxtFunction) && mem.u64(c + kCloEnv) == env;
    }
  } catch (const InterpReadError&) {
  }
  return false;
}

std::string RReader::binding_value(InterpMemory& mem, uint64_t cell) const {
  RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
  InterpVariable v;
  r.binding(cell, v);
  return v.value;
}

RReader::VectorBytes RReader::bound_vector(InterpMemory& mem, uint64_t cell,
                                           uint32_t max_bytes) const {
  try {
    RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
    if (mem.u64(cell) >> 48) return {};  // BNDCELL_TAG: an unboxed number
    uint64_t v = r.car(cell);
    unsigned t = r.type(v);
    uint64_t size = t == kLogical || t == kInt             ? 4
                    : t == kReal || t == kStr || t == kVec ? 8
                    : t == kCplx                           ? 16
                                                           : 0;
    if (!size || r.altrep(v)) return {};
    int64_t n = r.length(v);
    if (n < 1 || uint64_t(n) * size > max_bytes) return {};
    return {v + kData, uint32_t(uint64_t(n) * size)};
  } catch (const InterpReadError&) {
    return {};
  }
}

}  // namespace rwd
