// The function objects of a stopped CPython, found through its cyclic garbage collector's
// lists (Include/internal/pycore_gc.h, Modules/gcmodule.c): every function object is tracked
// from its creation (PyFunction_New) until it dies, in one of the generations' doubly linked
// lists or, after gc.freeze(), in the permanent one. Python breakpoints find there the code of
// modules imported before the current point (python_breakpoints.h).
#include "engine/interp/python/python_frames.h"

namespace rwd {

namespace {

/// Objects visited at most (a list longer than this is garbage or a huge heap).
constexpr size_t kMaxObjects = 20'000'000;
/// _gc_next's low bits hold collection flags (NEXT_MASK_UNREACHABLE) while a collection runs.
constexpr uint64_t kGcFlags = 3;

}  // namespace

std::vector<uint64_t> PythonReader::function_codes(InterpMemory& mem, size_t max) const {
  const PythonLayout& l = *layout_;
  std::vector<uint64_t> out;
  if (!function_type_) return out;
  uint64_t interp = mem.u64(runtime_ + uint64_t(l.runtime_interpreters_head));
  if (!interp) return out;
  std::vector<uint64_t> heads;
  for (int g = 0; g < py::kGcGenerations; ++g)
    heads.push_back(interp + uint64_t(l.interp_gc_generations + g * py::kGcGenerationSize));
  heads.push_back(interp + uint64_t(l.interp_gc_permanent));
  size_t visited = 0;
  for (uint64_t head : heads) {
    for (uint64_t gc = mem.u64(head) & ~kGcFlags; gc && gc != head; gc = mem.u64(gc) & ~kGcFlags) {
      if (++visited > kMaxObjects) throw InterpReadError("the collector's lists do not end");
      uint64_t obj = gc + py::kGcHeadSize;
      if (mem.u64(obj + py::kObType) != function_type_) continue;
      if (uint64_t code = mem.u64(obj + uint64_t(l.function_code))) out.push_back(code);
      if (out.size() >= max) return out;
    }
  }
  return out;
}

}  // namespace rwd
