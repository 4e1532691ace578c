// Finding the instruction before a watchpoint trap (write_insn.h), with capstone's operand
// details.
#include "engine/arch/write_insn.h"

#include <map>

#include "engine/arch/capstone_api.h"
#include "engine/arch/insn.h"

namespace rwd {

namespace {

/// The value of 64-bit register `reg` (a capstone X86_REG_*) in `r`; nullopt for any other.
std::optional<uint64_t> reg64(unsigned reg, const Registers& r) {
  switch (reg) {
    case X86_REG_RAX:
      return r.rax;
    case X86_REG_RBX:
      return r.rbx;
    case X86_REG_RCX:
      return r.rcx;
    case X86_REG_RDX:
      return r.rdx;
    case X86_REG_RSI:
      return r.rsi;
    case X86_REG_RDI:
      return r.rdi;
    case X86_REG_RBP:
      return r.rbp;
    case X86_REG_RSP:
      return r.rsp;
    case X86_REG_R8:
      return r.r8;
    case X86_REG_R9:
      return r.r9;
    case X86_REG_R10:
      return r.r10;
    case X86_REG_R11:
      return r.r11;
    case X86_REG_R12:
      return r.r12;
    case X86_REG_R13:
      return r.r13;
    case X86_REG_R14:
      return r.r14;
    case X86_REG_R15:
      return r.r15;
    default:
      return std::nullopt;
  }
}

/// The value of general register `reg` (a capstone X86_REG_* of any width: rax, eax, ax, al,
/// ah) in `r`, in its low bytes; nullopt for any other register.
std::optional<uint64_t> gpr_value(unsigned reg, const Registers& r) {
  // Each row: the 64-bit register, then its 32-, 16- and low 8-bit parts; ah..dh below.
  static const unsigned kParts[][4] = {
      {X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL},
      {X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL},
      {X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL},
      {X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL},
      {X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL},
      {X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL},
      {X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL},
      {X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL},
      {X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B},
      {X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B},
      {X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B},
      {X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B},
      {X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B},
      {X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B},
      {X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B},
      {X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B},
  };
  for (const auto& row : kParts)
    for (unsigned part : row)
      if (part == reg) return reg64(row[0], r);
  static const unsigned kHigh[][2] = {{X86_REG_AH, X86_REG_RAX},
                                      {X86_REG_BH, X86_REG_RBX},
                                      {X86_REG_CH, X86_REG_RCX},
                                      {X86_REG_DH, X86_REG_RDX}};
  for (const auto& [high, full] : kHigh)
    if (high == reg) return *reg64(full, r) >> 8;
  return std::nullopt;
}

/// Whether `insn` (decoded with details) writes register `reg` itself. (A write to a part of
/// it would change the address computed from `after` too; the overlap check rejects that.)
bool writes_reg(csh h, const cs_insn* insn, unsigned reg) {
  cs_regs read, written;
  uint8_t nread = 0, nwritten = 0;
  if (capstone::regs_access(h, insn, read, &nread, written, &nwritten) != CS_ERR_OK) return true;
  for (uint8_t i = 0; i < nwritten; ++i)
    if (written[i] == reg) return true;
  return false;
}

/// The address memory operand `op` names with registers `r`, its instruction ending at
/// `next` (rip-relative operands count from there); nullopt for a base or index register
/// reg64 does not know.
std::optional<uint64_t> memory_operand_address(const cs_x86_op& op, const Registers& r,
                                               uint64_t next) {
  uint64_t ea = uint64_t(op.mem.disp);
  if (op.mem.base == X86_REG_RIP) {
    ea += next;
  } else if (op.mem.base != X86_REG_INVALID) {
    auto b = reg64(op.mem.base, r);
    if (!b) return std::nullopt;
    ea += *b;
  }
  if (op.mem.index != X86_REG_INVALID) {
    auto v = reg64(op.mem.index, r);
    if (!v) return std::nullopt;
    ea += *v * uint64_t(op.mem.scale);
  }
  if (op.mem.segment == X86_REG_FS) ea += r.fs_base;
  if (op.mem.segment == X86_REG_GS) ea += r.gs_base;
  return ea;
}

/// Whether `insn` ending at `end` writes memory overlapping [addr, addr + len), by an
/// explicit operand whose address `after` gives.
bool stores_to(csh h, const cs_insn* insn, uint64_t end, const Registers& after, uint64_t addr,
               uint64_t len) {
  if (capstone::insn_group(h, insn, CS_GRP_JUMP) || capstone::insn_group(h, insn, CS_GRP_CALL) ||
      capstone::insn_group(h, insn, CS_GRP_RET) || capstone::insn_group(h, insn, CS_GRP_INT) ||
      insn->detail->x86.prefix[0] != 0)  // rep/lock prefixes: string or atomic forms
    return false;
  const cs_x86& x = insn->detail->x86;
  for (uint8_t i = 0; i < x.op_count; ++i) {
    const cs_x86_op& op = x.operands[i];
    if (op.type != X86_OP_MEM || !(op.access & CS_AC_WRITE)) continue;
    if ((op.mem.base != X86_REG_RIP && op.mem.base != X86_REG_INVALID &&
         writes_reg(h, insn, op.mem.base)) ||
        (op.mem.index != X86_REG_INVALID && writes_reg(h, insn, op.mem.index)))
      return false;
    auto address = memory_operand_address(op, after, end);
    if (!address) return false;
    uint64_t ea = *address;
    if (op.size == 0) return false;
    if (ea < addr + len && addr < ea + op.size) return true;
  }
  return false;
}

/// A capstone x86-64 decoder with operand details and one instruction buffer, closed when it
/// goes out of scope. `ok` is false when capstone could not open.
struct Decoder {
  csh h = 0;
  cs_insn* insn = nullptr;
  bool ok = false;
  Decoder() {
    if (capstone::open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) return;
    capstone::option(h, CS_OPT_DETAIL, CS_OPT_ON);
    insn = capstone::malloc(h);
    ok = insn != nullptr;
  }
  ~Decoder() {
    if (insn) capstone::free(insn, 1);
    if (h) capstone::close(&h);
  }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
};

/// The forward decodings of the bytes of `code` (which end at `end`), one from each start
/// that leaves 16 bytes or more, that land on `end`.
struct Landings {
  int landed = 0;  ///< how many land on `end`
  /// For each start of an instruction that ends at `end`: how many of them end with it.
  std::map<uint64_t, int> votes;
  /// For each instruction start: how many of them decode an instruction there.
  std::map<uint64_t, int> held;
};

Landings landing_votes(Decoder& d, uint64_t end, const std::vector<uint8_t>& code) {
  Landings l;
  uint64_t base = end - code.size();
  std::vector<uint64_t> starts;
  for (size_t s = 0; s + 16 <= code.size(); ++s) {
    const uint8_t* p = code.data() + s;
    size_t size = code.size() - s;
    uint64_t pc = base + s;
    starts.clear();
    while (size > 0) {
      starts.push_back(pc);
      if (!capstone::disasm_iter(d.h, &p, &size, &pc, d.insn)) break;
    }
    if (size != 0) continue;  // stopped on bytes that do not decode, or past `end`
    ++l.landed;
    ++l.votes[starts.back()];
    for (uint64_t a : starts) ++l.held[a];
  }
  return l;
}

/// Whether the instructions that every decoding in `l` (of `code`, ending at `end`) shares
/// cross zero fill in the 16 bytes before `start`: an instruction beginning with opcode 0x00
/// (`add r/m8, r8`) right after a `ret`, a `jmp` or another such instruction. That is the
/// zero fill a linker puts between sections; zeros decode two by two, so the code after them
/// is cut where the parity of the fill puts it, which every decoding then agrees on: .init's
/// `ret` and 9 zero bytes before .plt make `push 0x2fca(%rip)` (ff 35 ...) at PLT0 read as
/// `add %bh,%bh` then `xor $0x2fca,%eax` one byte into it. Only the shared instructions
/// count: a decoding that starts inside an instruction (on a displacement's zeros, say)
/// decodes garbage until it joins the others.
bool zero_fill_before(Decoder& d, const Landings& l, uint64_t end, const std::vector<uint8_t>& code,
                      uint64_t start) {
  uint64_t base = end - code.size();
  bool after_end_of_code = false;
  for (const auto& [at, n] : l.held) {
    if (n != l.landed || at > start) continue;
    const uint8_t* p = code.data() + (at - base);
    size_t size = size_t(end - at);
    uint64_t pc = at;
    bool zero_op = *p == 0x00;
    if (zero_op && after_end_of_code && at + 16 >= start) return true;
    if (!capstone::disasm_iter(d.h, &p, &size, &pc, d.insn)) return false;
    after_end_of_code =
        zero_op || d.insn->id == X86_INS_JMP || capstone::insn_group(d.h, d.insn, CS_GRP_RET);
  }
  return false;
}

}  // namespace

std::optional<uint64_t> insn_before(uint64_t end, const std::vector<uint8_t>& code) {
  Decoder d;
  if (!d.ok) return std::nullopt;
  Landings l = landing_votes(d, end, code);
  for (const auto& [start, n] : l.votes) {
    if (l.landed < 4 || n != l.landed) continue;
    if (zero_fill_before(d, l, end, code, start)) return std::nullopt;
    // Whether it can go on to `end`: not an unconditional jump, a return or an interrupt.
    const uint8_t* p = code.data() + (start - (end - code.size()));
    size_t size = size_t(end - start);
    uint64_t pc = start;
    if (!capstone::disasm_iter(d.h, &p, &size, &pc, d.insn)) return std::nullopt;
    if (d.insn->id == X86_INS_JMP || capstone::insn_group(d.h, d.insn, CS_GRP_RET) ||
        capstone::insn_group(d.h, d.insn, CS_GRP_CALL) ||
        capstone::insn_group(d.h, d.insn, CS_GRP_INT) || d.insn->id == X86_INS_UD2 ||
        d.insn->id == X86_INS_HLT || d.insn->id == X86_INS_SYSCALL)
      return std::nullopt;
    return start;
  }
  return std::nullopt;
}

bool plain_to_step(const std::vector<uint8_t>& code, uint64_t at) {
  Decoder d;
  if (!d.ok) return false;
  const uint8_t* p = code.data();
  size_t size = code.size();
  uint64_t pc = at;
  if (!capstone::disasm_iter(d.h, &p, &size, &pc, d.insn)) return false;
  return !(capstone::insn_group(d.h, d.insn, CS_GRP_INT) ||
           capstone::insn_group(d.h, d.insn, CS_GRP_IRET) || d.insn->id == X86_INS_SYSCALL ||
           d.insn->id == X86_INS_SYSENTER || d.insn->id == X86_INS_UD2 ||
           d.insn->id == X86_INS_HLT || d.insn->id == X86_INS_CPUID ||
           d.insn->id == X86_INS_RDTSC || d.insn->id == X86_INS_RDTSCP ||
           rep_string_insn_length(code.data(), code.size()) > 0);
}

std::optional<uint64_t> writing_insn_before(uint64_t end, const std::vector<uint8_t>& code,
                                            const Registers& after, uint64_t addr, uint64_t len) {
  Decoder d;
  if (!d.ok) return std::nullopt;
  csh h = d.h;
  cs_insn* insn = d.insn;
  std::vector<uint64_t> candidates;  // starts of a store that ends at `end`, shortest first
  for (size_t n = 1; n <= 15 && n <= code.size(); ++n) {
    const uint8_t* p = code.data() + code.size() - n;
    size_t size = n;
    uint64_t pc = end - n;
    if (!capstone::disasm_iter(h, &p, &size, &pc, insn) || size != 0)
      continue;  // not exactly n bytes
    if (stores_to(h, insn, end, after, addr, len)) candidates.push_back(end - n);
  }
  std::optional<uint64_t> found;
  if (candidates.size() == 1) found = candidates[0];
  if (candidates.size() > 1) {
    // A suffix of an instruction often decodes as one too ("48 89 50 08" and "89 50 08"
    // store to the same operand). Instruction streams resynchronise within a few
    // instructions: decode forwards from each earlier byte, and keep the candidate that
    // every decoding landing on `end` ends with.
    Landings l = landing_votes(d, end, code);
    for (uint64_t c : candidates)
      if (l.landed >= 4 && l.votes[c] == l.landed) found = c;
  }
  return found;
}

bool insn_writes_to(const std::vector<uint8_t>& code, uint64_t at, const Registers& before,
                    uint64_t addr, uint64_t len) {
  thread_local Decoder d;  // once per thread: this runs at every single step of a watched run
  if (!d.ok) return false;
  const uint8_t* p = code.data();
  size_t left = code.size();
  uint64_t pc = at;
  if (!capstone::disasm_iter(d.h, &p, &left, &pc, d.insn)) return false;
  const cs_x86& x = d.insn->detail->x86;
  for (uint8_t i = 0; i < x.op_count; ++i) {
    const cs_x86_op& op = x.operands[i];
    if (op.type != X86_OP_MEM || !(op.access & CS_AC_WRITE) || op.size == 0) continue;
    auto ea = memory_operand_address(op, before, pc);  // pc: the next instruction's address
    if (ea && *ea < addr + len && addr < *ea + op.size) return true;
  }
  return false;
}

std::optional<PlainStore> plain_store(const std::vector<uint8_t>& code, uint64_t at,
                                      const Registers& before) {
  thread_local Decoder d;  // once per thread: this runs at every write to a watched page
  if (!d.ok) return std::nullopt;
  const uint8_t* p = code.data();
  size_t left = code.size();
  uint64_t pc = at;
  if (!capstone::disasm_iter(d.h, &p, &left, &pc, d.insn)) return std::nullopt;
  const cs_x86& x = d.insn->detail->x86;
  if (d.insn->id != X86_INS_MOV || x.prefix[0] != 0 || x.op_count != 2) return std::nullopt;
  const cs_x86_op& dst = x.operands[0];
  const cs_x86_op& src = x.operands[1];
  if (dst.type != X86_OP_MEM || !(dst.access & CS_AC_WRITE)) return std::nullopt;
  if (dst.size != 1 && dst.size != 2 && dst.size != 4 && dst.size != 8) return std::nullopt;
  if (dst.mem.segment != X86_REG_INVALID && dst.mem.segment != X86_REG_FS &&
      dst.mem.segment != X86_REG_GS)
    return std::nullopt;
  std::optional<uint64_t> value;
  if (src.type == X86_OP_IMM) value = uint64_t(src.imm);  // capstone sign-extends imm32
  if (src.type == X86_OP_REG) value = gpr_value(src.reg, before);
  auto addr = memory_operand_address(dst, before, pc);
  if (!value || !addr) return std::nullopt;
  PlainStore s;
  s.addr = *addr;
  s.next = pc;
  for (uint8_t i = 0; i < dst.size; ++i) s.bytes.push_back(uint8_t(*value >> (8 * i)));
  return s;
}

bool may_write_memory(const std::vector<uint8_t>& code, uint64_t at, size_t len) {
  Decoder d;
  if (!d.ok) return true;
  const uint8_t* p = code.data();
  size_t size = code.size();
  uint64_t pc = at;
  while (pc < at + len) {
    if (!capstone::disasm_iter(d.h, &p, &size, &pc, d.insn)) return true;  // undecodable: the worst
    const cs_x86& x = d.insn->detail->x86;
    for (uint8_t i = 0; i < x.op_count; ++i) {
      const cs_x86_op& op = x.operands[i];
      if (op.type == X86_OP_MEM && (op.access == 0 || (op.access & CS_AC_WRITE))) return true;
    }
    if (writes_reg(d.h, d.insn, X86_REG_RSP) || capstone::insn_group(d.h, d.insn, CS_GRP_CALL) ||
        capstone::insn_group(d.h, d.insn, CS_GRP_INT))
      return true;
  }
  return false;
}

}  // namespace rwd
