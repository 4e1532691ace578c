#include "displaced_code.h"

#include <cstring>

#include "engine/arch/capstone_api.h"
#include "engine/arch/insn.h"

namespace rwd {

namespace {

/// A capstone handle for x86-64 with instruction details, closed when it goes.
class DetailedCapstone {
 public:
  DetailedCapstone() {
    if (capstone::open(CS_ARCH_X86, CS_MODE_64, &h_) != CS_ERR_OK) return;
    capstone::option(h_, CS_OPT_DETAIL, CS_OPT_ON);
    insn_ = capstone::malloc(h_);
  }
  ~DetailedCapstone() {
    if (insn_) capstone::free(insn_, 1);
    if (h_) capstone::close(&h_);
  }
  DetailedCapstone(const DetailedCapstone&) = delete;
  DetailedCapstone& operator=(const DetailedCapstone&) = delete;
  /// Decodes one instruction at `*code` (address `*pc`), advancing both; nullptr if invalid.
  const cs_insn* next(const uint8_t** code, size_t* n, uint64_t* pc) {
    if (!insn_ || !capstone::disasm_iter(h_, code, n, pc, insn_)) return nullptr;
    return insn_;
  }

 private:
  csh h_ = 0;
  cs_insn* insn_ = nullptr;
};

/// loop, loope, loopne and jrcxz (jecxz, jcxz): short branches on rcx with no rel32 form.
bool is_rcx_branch(unsigned id) {
  switch (id) {
    case X86_INS_LOOP:
    case X86_INS_LOOPE:
    case X86_INS_LOOPNE:
    case X86_INS_JRCXZ:
    case X86_INS_JECXZ:
    case X86_INS_JCXZ:
      return true;
    default:
      return false;
  }
}

/// Instructions whose effect depends on where they are, beyond what relocation fixes.
bool unmovable(unsigned id) {
  if (is_rcx_branch(id)) return true;
  switch (id) {
    case X86_INS_LCALL:
    case X86_INS_SYSCALL:
    case X86_INS_SYSENTER:
    case X86_INS_INT:
    case X86_INS_INT1:
    case X86_INS_INT3:
    case X86_INS_INTO:
    case X86_INS_XBEGIN:
      return true;
    default:
      return false;
  }
}

bool in_group(const cs_insn* insn, uint8_t group) {
  const cs_detail* d = insn->detail;
  for (uint8_t i = 0; i < d->groups_count; ++i)
    if (d->groups[i] == group) return true;
  return false;
}

bool fits_rel32(int64_t v) {
  return v >= INT32_MIN && v <= INT32_MAX;
}

void put32(std::vector<uint8_t>& out, int32_t v) {
  uint8_t b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}

}  // namespace

std::optional<DisplacedCode> displace_instructions(const uint8_t* code, size_t n, uint64_t from,
                                                   uint64_t to, size_t min_bytes, bool move_call) {
  DetailedCapstone cs;
  DisplacedCode out;
  const uint8_t* p = code;
  size_t left = n;
  uint64_t pc = from;
  while (out.covered < min_bytes) {
    if (out.covered > 0) {
      out.boundaries.push_back(out.covered);
      out.moved_boundaries.push_back(out.code.size());
    }
    const cs_insn* insn = cs.next(&p, &left, &pc);
    if (!insn || unmovable(insn->id)) return std::nullopt;
    const cs_x86& x = insn->detail->x86;
    const uint64_t here = to + out.code.size();  // where the copy starts
    const uint64_t end = insn->address + insn->size;
    if (insn->id == X86_INS_CALL) {
      // A direct call, only as the last instruction moved: the copy pushes the original
      // return address (outside the patch, which ends with it) and jumps to the target, so
      // the callee, its stack and its return see what the call would have given them. lea
      // and mov leave the flags alone, as call does.
      if (!move_call || x.op_count != 1 || x.operands[0].type != X86_OP_IMM ||
          out.covered + insn->size < min_bytes)
        return std::nullopt;
      out.code.insert(out.code.end(), {0x48, 0x8d, 0x64, 0x24, 0xf8});  // lea rsp, [rsp-8]
      out.code.insert(out.code.end(), {0xc7, 0x04, 0x24});              // mov dword [rsp], lo
      put32(out.code, int32_t(uint32_t(end)));
      out.code.insert(out.code.end(), {0xc7, 0x44, 0x24, 0x04});  // mov dword [rsp+4], hi
      put32(out.code, int32_t(uint32_t(end >> 32)));
      const uint64_t jmp_end = to + out.code.size() + 5;  // jmp rel32 counts from its end
      int64_t rel = int64_t(uint64_t(x.operands[0].imm) - jmp_end);
      if (!fits_rel32(rel)) return std::nullopt;
      out.code.push_back(0xe9);  // jmp target
      put32(out.code, int32_t(rel));
      out.covered += insn->size;
      break;
    }
    bool relative_branch = false;
    if (x.op_count == 1 && x.operands[0].type == X86_OP_IMM && in_group(insn, X86_GRP_JUMP)) {
      relative_branch = true;
      uint64_t target = uint64_t(x.operands[0].imm);
      if (insn->id == X86_INS_JMP) {
        int64_t rel = int64_t(target - (here + 5));
        if (!fits_rel32(rel)) return std::nullopt;
        out.code.push_back(0xe9);
        put32(out.code, int32_t(rel));
      } else {
        // Jcc: the condition is the low nibble of 0x70+cc (rel8) or 0x0f 0x80+cc (rel32).
        uint8_t cc =
            x.opcode[0] == 0x0f ? uint8_t(x.opcode[1] & 0x0f) : uint8_t(x.opcode[0] & 0x0f);
        int64_t rel = int64_t(target - (here + 6));
        if (!fits_rel32(rel)) return std::nullopt;
        out.code.push_back(0x0f);
        out.code.push_back(uint8_t(0x80 | cc));
        put32(out.code, int32_t(rel));
      }
    }
    if (!relative_branch) {
      std::vector<uint8_t> bytes(insn->bytes, insn->bytes + insn->size);
      bool rip_relative = false;
      for (int i = 0; i < x.op_count; ++i)
        rip_relative |= x.operands[i].type == X86_OP_MEM && x.operands[i].mem.base == X86_REG_RIP;
      if (rip_relative) {
        if (x.encoding.disp_size != 4 || x.encoding.disp_offset + 4u > insn->size)
          return std::nullopt;
        uint64_t target = end + uint64_t(int64_t(x.disp));
        int64_t disp = int64_t(target - (here + insn->size));
        if (!fits_rel32(disp)) return std::nullopt;
        int32_t d32 = int32_t(disp);
        std::memcpy(bytes.data() + x.encoding.disp_offset, &d32, 4);
      }
      out.code.insert(out.code.end(), bytes.begin(), bytes.end());
    }
    out.covered += insn->size;
  }
  return out;
}

StepKind step_kind(const uint8_t* code, size_t n, uint64_t pc) {
  DetailedCapstone cs;
  const cs_insn* insn = cs.next(&code, &n, &pc);
  if (!insn) return StepKind::None;
  if (is_rcx_branch(insn->id) || insn->id == X86_INS_RET) return StepKind::Branch;
  switch (insn->id) {
    case X86_INS_LJMP:
    case X86_INS_LCALL:
    case X86_INS_RETF:
    case X86_INS_RETFQ:
    case X86_INS_HLT:
    case X86_INS_UD2:
    case X86_INS_PUSHF:
    case X86_INS_PUSHFD:
    case X86_INS_PUSHFQ:
      return StepKind::None;
    default:
      break;
  }
  if (unmovable(insn->id) || in_group(insn, CS_GRP_INT) || in_group(insn, CS_GRP_IRET))
    return StepKind::None;
  const cs_x86& x = insn->detail->x86;
  const bool direct = x.op_count == 1 && x.operands[0].type == X86_OP_IMM;
  if (insn->id == X86_INS_JMP || insn->id == X86_INS_CALL)
    return direct ? StepKind::Plain : StepKind::Branch;
  if (in_group(insn, CS_GRP_JUMP)) return StepKind::Branch;  // a conditional jump
  if (in_group(insn, CS_GRP_CALL) || in_group(insn, CS_GRP_RET)) return StepKind::None;
  return StepKind::Plain;
}

std::vector<uint64_t> direct_jump_targets(const uint8_t* code, size_t n, uint64_t base,
                                          uint64_t x) {
  std::vector<uint64_t> out;
  if (x < base || x - base > n) return out;
  DetailedCapstone cs;
  auto target = [](const cs_insn* insn) -> std::optional<uint64_t> {
    if (!in_group(insn, CS_GRP_JUMP)) return std::nullopt;  // calls are CS_GRP_CALL
    const cs_x86& d = insn->detail->x86;
    if (d.op_count != 1 || d.operands[0].type != X86_OP_IMM) return std::nullopt;
    return uint64_t(d.operands[0].imm);
  };
  const size_t before = size_t(x - base);
  const uint8_t* p = code + before;
  size_t left = n - before;
  uint64_t pc = x;
  while (const cs_insn* insn = cs.next(&p, &left, &pc))
    if (auto t = target(insn)) out.push_back(*t);
  for (size_t s = 0; s < before && s < 64; ++s) {
    std::vector<uint64_t> found;
    p = code + s;
    left = before - s;  // an instruction that would run past x does not decode
    pc = base + s;
    while (pc < x)
      if (const cs_insn* insn = cs.next(&p, &left, &pc)) {
        if (auto t = target(insn)) found.push_back(*t);
      } else {
        break;
      }
    if (pc != x) continue;
    out.insert(out.end(), found.begin(), found.end());
    break;
  }
  return out;
}

bool in_short_loop(const uint8_t* code, size_t n, uint64_t x, size_t max_insns) {
  DetailedCapstone cs;
  const uint8_t* p = code;
  size_t left = n;
  uint64_t pc = x;
  for (size_t i = 0; i < max_insns; ++i) {
    const cs_insn* insn = cs.next(&p, &left, &pc);
    if (!insn) return false;
    if (in_group(insn, CS_GRP_CALL) || in_group(insn, CS_GRP_RET) || in_group(insn, CS_GRP_INT) ||
        in_group(insn, CS_GRP_IRET) || syscall_insn_name(insn->bytes, insn->size))
      return false;
    if (!in_group(insn, CS_GRP_JUMP) && !is_rcx_branch(insn->id)) continue;
    const cs_x86& d = insn->detail->x86;
    if (d.op_count != 1 || d.operands[0].type != X86_OP_IMM) return false;  // indirect
    if (uint64_t(d.operands[0].imm) <= x) return true;
  }
  return false;
}

}  // namespace rwd
