// function_parts (function_parts.h): a function's symbol range and the parts its direct jumps
// lead into, each as its unwind-table entry names it.
#include "engine/symbols/function_parts.h"

#include <algorithm>
#include <string>

#include "engine/arch/capstone_api.h"
#include "engine/errors.h"
#include "engine/symbols/unwinder.h"

namespace rwd {

namespace {

constexpr size_t kMaxParts = 16;
constexpr uint64_t kMaxCode = 1 << 20;  // bytes of the symbol's code decoded at most

/// Targets of the direct branches of capstone group `group` (CS_GRP_JUMP: jmp, jcc;
/// CS_GRP_CALL: call) in `code`, which starts at runtime address `lo`, that leave [lo, hi),
/// in the order of the instructions, each once. Empty when capstone cannot be loaded.
std::vector<uint64_t> branches_out(const std::vector<uint8_t>& code, uint64_t lo, uint64_t hi,
                                   cs_group_type group) {
  std::vector<uint64_t> out;
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
    if (!capstone::insn_group(h, insn, group)) continue;
    const cs_x86& x = insn->detail->x86;
    if (x.op_count == 1 && x.operands[0].type == X86_OP_IMM) {
      uint64_t to = uint64_t(x.operands[0].imm);
      if ((to < lo || to >= hi) && std::find(out.begin(), out.end(), to) == out.end())
        out.push_back(to);
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

/// The code at [lo, hi) (at most kMaxCode bytes of it); empty when it cannot be read.
std::vector<uint8_t> read_code(Target& target, uint64_t lo, uint64_t hi) {
  if (!lo || hi <= lo) return {};
  try {
    return target.read_memory(lo, size_t(std::min<uint64_t>(hi - lo, kMaxCode)));
  } catch (const Error&) {
    return {};
  }
}

}  // namespace

CodeRanges function_parts(Target& target, const ModuleList& modules, const char* name) {
  CodeRanges out;
  auto [lo, hi] = modules.function_range(name);
  if (!lo || hi <= lo) return out;
  out.emplace_back(lo, hi);
  const std::vector<uint8_t> code = read_code(target, lo, hi);
  if (code.empty()) return out;
  try {
    for (uint64_t to : branches_out(code, lo, lo + code.size(), CS_GRP_JUMP)) {
      if (out.size() > kMaxParts) break;
      if (in_ranges(out, to) || other_function_at(modules, to, name)) continue;
      auto part = unwind_table_range(target, modules, to);
      if (!part || other_function_at(modules, part->first, name)) continue;
      out.push_back(*part);
      if (const Module* m = modules.module_at(part->first))
        m->name_part(name, m->to_link(part->first), m->to_link(part->second));
    }
  } catch (const Error&) {
    // capstone not loadable: the symbol's range alone
  }
  return out;
}

std::vector<uint64_t> direct_calls(Target& target, const ModuleList& modules, const char* name) {
  auto [lo, hi] = modules.function_range(name);
  const std::vector<uint8_t> code = read_code(target, lo, hi);
  if (code.empty()) return {};
  try {
    return branches_out(code, lo, lo + code.size(), CS_GRP_CALL);
  } catch (const Error&) {
    return {};  // capstone not loadable
  }
}

}  // namespace rwd
