// function_parts (function_parts.h): a function's symbol range and the parts its direct jumps
// lead into, each as its unwind-table entry names it.
#include "engine/symbols/function_parts.h"

#include <set>
#include <string>

#include "engine/arch/capstone_api.h"
#include "engine/errors.h"
#include "engine/symbols/unwinder.h"

namespace rwd {

namespace {

constexpr size_t kMaxParts = 16;
constexpr uint64_t kMaxCode = 1 << 20;  // bytes of the symbol's code decoded at most

/// Targets of the direct jumps (jmp, jcc) in [lo, hi) of `code` that leave that range.
std::set<uint64_t> jumps_out(const std::vector<uint8_t>& code, uint64_t lo, uint64_t hi) {
  std::set<uint64_t> out;
  csh h;
  if (capstone::open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) return out;
  capstone::option(h, CS_OPT_DETAIL, CS_OPT_ON);
  cs_insn* insn = capstone::malloc(h);
  const uint8_t* p = code.data();
  size_t left = code.size();
  uint64_t addr = lo;
  while (left > 0) {
    if (!capstone::disasm_iter(h, &p, &left, &addr, insn)) {
      // Data or padding between blocks: skip a byte and go on decoding.
      ++p, --left, ++addr;
      continue;
    }
    if (!capstone::insn_group(h, insn, CS_GRP_JUMP)) continue;
    const cs_x86& x = insn->detail->x86;
    if (x.op_count == 1 && x.operands[0].type == X86_OP_IMM) {
      uint64_t to = uint64_t(x.operands[0].imm);
      if (to < lo || to >= hi) out.insert(to);
    }
  }
  capstone::free(insn, 1);
  capstone::close(&h);
  return out;
}

/// Whether a function other than `name` (or a part of it named NAME.something) begins at
/// runtime address `at`.
bool other_function_at(const ModuleList& modules, uint64_t at, const std::string& name) {
  const Module* m = modules.module_at(at);
  if (!m) return true;  // not code of a file: no part of this function
  const Symbol* s = m->symbols().function_at(m->to_link(at));
  if (!s || s->addr != m->to_link(at)) return false;
  return s->name != name && s->name.rfind(name + ".", 0) != 0;
}

}  // namespace

CodeRanges function_parts(Target& target, const ModuleList& modules, const char* name) {
  CodeRanges out;
  auto [lo, hi] = modules.function_range(name);
  if (!lo || hi <= lo) return out;
  out.emplace_back(lo, hi);
  std::vector<uint8_t> code;
  try {
    code = target.read_memory(lo, size_t(std::min<uint64_t>(hi - lo, kMaxCode)));
  } catch (const Error&) {
    return out;
  }
  if (code.empty()) return out;
  try {
    for (uint64_t to : jumps_out(code, lo, lo + code.size())) {
      if (out.size() > kMaxParts) break;
      if (in_ranges(out, to) || other_function_at(modules, to, name)) continue;
      auto part = unwind_table_range(target, modules, to);
      if (!part || other_function_at(modules, part->first, name)) continue;
      out.push_back(*part);
    }
  } catch (const Error&) {
    // capstone not loadable: the symbol's range alone
  }
  return out;
}

}  // namespace rwd
