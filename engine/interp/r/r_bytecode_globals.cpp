#include "engine/interp/r/r_bytecode_globals.h"

#include <map>
#include <optional>

#include "engine/arch/capstone_api.h"

namespace rwd {

namespace {

// RCNTXT (Defn.h, glibc x86-64): bcbody and bcpc in every R 4.x, srcref by version.
constexpr int64_t kBcBodyField = 312, kBcPcField = 320, kSrcref40 = 368, kSrcref44 = 384;
constexpr size_t kCodeBytes = 768;  // Rf_begincontext is about 340 bytes in Debian's R 4.2

/// What a register (or half of an xmm register) holds, as far as the analysis knows.
struct Held {
  enum Kind { Unknown, Address, ValueAt, Context } kind = Unknown;
  uint64_t addr = 0;  ///< Address: the number; ValueAt: where the 8-byte value was loaded from
};

using Regs = std::map<unsigned, Held>;

/// The address a memory operand names, when the analysis knows it (0 otherwise); sets
/// `context_offset` instead when it is the context argument plus a displacement.
uint64_t location(const x86_op_mem& m, uint64_t next_pc, const Regs& regs, InterpMemory& mem,
                  std::optional<int64_t>& context_offset) {
  if (m.index != X86_REG_INVALID || m.segment != X86_REG_INVALID) return 0;
  if (m.base == X86_REG_RIP) return next_pc + uint64_t(m.disp);
  auto it = regs.find(m.base);
  if (it == regs.end()) return 0;
  switch (it->second.kind) {
    case Held::Address:
      return it->second.addr + uint64_t(m.disp);
    case Held::ValueAt:  // a pointer loaded from memory, such as a GOT slot: read it now
      return mem.u64(it->second.addr) + uint64_t(m.disp);
    case Held::Context:
      context_offset = m.disp;
      return 0;
    default:
      return 0;
  }
}

/// A capstone handle with instruction details (Intel operand order), closed when it goes.
struct Decoder {
  csh h = 0;
  cs_insn* insn = nullptr;
  Decoder() {
    if (capstone::open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) throw Error("no capstone");
    capstone::option(h, CS_OPT_DETAIL, CS_OPT_ON);
    insn = capstone::malloc(h);
  }
  ~Decoder() {
    capstone::free(insn, 1);
    capstone::close(&h);
  }
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
};

/// Decodes `len` bytes of code at `at`, calling `each(insn, next_pc)` for each instruction
/// (with details) until it returns false. Throws InterpReadError when the code cannot be
/// read.
template <class Each>
void decode(InterpMemory& mem, uint64_t at, size_t len, Each each) {
  std::vector<uint8_t> code = mem.bytes(at, len);
  Decoder d;
  const uint8_t* p = code.data();
  size_t left = code.size();
  uint64_t pc = at;
  while (left > 0 && capstone::disasm_iter(d.h, &p, &left, &pc, d.insn))
    if (!each(*d.insn, pc)) return;
}

}  // namespace

RBytecodeGlobals find_r_bytecode_globals(const ModuleList& modules, InterpMemory& mem) {
  RBytecodeGlobals out;
  uint64_t fn = function_symbol_address(modules, "Rf_begincontext");
  if (!fn) return out;
  try {
    std::vector<uint8_t> code = mem.bytes(fn, kCodeBytes);
    Decoder d;
    Regs regs{{X86_REG_RDI, {Held::Context, 0}}};
    std::map<unsigned, std::pair<Held, Held>> xmm;  // low and high quadwords
    std::map<int64_t, Held> stored;                 // context offset -> what went there
    const uint8_t* p = code.data();
    size_t left = code.size();
    uint64_t pc = fn;
    while (left > 0 && capstone::disasm_iter(d.h, &p, &left, &pc, d.insn)) {
      const cs_insn& i = *d.insn;
      if (i.id == X86_INS_RET || i.id == X86_INS_JMP) break;
      const cs_x86& x = i.detail->x86;
      // Every register the instruction writes is unknown after it, unless set below.
      cs_regs read, written;
      uint8_t nread = 0, nwritten = 0;
      capstone::regs_access(d.h, &i, read, &nread, written, &nwritten);
      auto forget = [&] {
        for (uint8_t k = 0; k < nwritten; ++k) {
          regs.erase(written[k]);
          xmm.erase(written[k]);
        }
      };
      if (x.op_count != 2) {
        forget();
        continue;
      }
      const cs_x86_op& dst = x.operands[0];
      const cs_x86_op& src = x.operands[1];
      std::optional<int64_t> dst_ctx, src_ctx;
      uint64_t src_loc = src.type == X86_OP_MEM ? location(src.mem, pc, regs, mem, src_ctx) : 0;
      if (dst.type == X86_OP_MEM) location(dst.mem, pc, regs, mem, dst_ctx);
      bool is_xmm_dst =
          dst.type == X86_OP_REG && dst.reg >= X86_REG_XMM0 && dst.reg <= X86_REG_XMM31;
      switch (i.id) {
        case X86_INS_LEA:
          forget();
          if (dst.type == X86_OP_REG && src_loc) regs[dst.reg] = {Held::Address, src_loc};
          break;
        case X86_INS_MOV:
          if (dst.type == X86_OP_REG && src.type == X86_OP_REG) {
            auto it = regs.find(src.reg);
            Held h = it == regs.end() ? Held{} : it->second;
            forget();
            if (dst.size == 8) regs[dst.reg] = h;
          } else if (dst.type == X86_OP_REG && src.type == X86_OP_MEM) {
            forget();
            if (dst.size == 8 && src_loc) regs[dst.reg] = {Held::ValueAt, src_loc};
          } else if (dst.type == X86_OP_MEM && src.type == X86_OP_REG && dst_ctx && dst.size == 8) {
            auto it = regs.find(src.reg);
            stored[*dst_ctx] = it == regs.end() ? Held{} : it->second;
          } else {
            forget();
          }
          break;
        case X86_INS_MOVQ:
          if (is_xmm_dst && src.type == X86_OP_MEM) {
            forget();
            xmm[dst.reg] = {src_loc ? Held{Held::ValueAt, src_loc} : Held{}, Held{}};
          } else if (dst.type == X86_OP_MEM && dst_ctx && src.type == X86_OP_REG) {
            auto it = xmm.find(src.reg);
            stored[*dst_ctx] = it == xmm.end() ? Held{} : it->second.first;
          } else {
            forget();
          }
          break;
        case X86_INS_MOVHPS:
          if (is_xmm_dst && src.type == X86_OP_MEM) {
            Held low = xmm.count(dst.reg) ? xmm[dst.reg].first : Held{};
            xmm[dst.reg] = {low, src_loc ? Held{Held::ValueAt, src_loc} : Held{}};
          } else if (dst.type == X86_OP_MEM && dst_ctx && src.type == X86_OP_REG) {
            auto it = xmm.find(src.reg);
            stored[*dst_ctx] = it == xmm.end() ? Held{} : it->second.second;
          } else {
            forget();
          }
          break;
        case X86_INS_MOVUPS:
        case X86_INS_MOVAPS:
        case X86_INS_MOVDQU:
        case X86_INS_MOVDQA:
          if (dst.type == X86_OP_MEM && dst_ctx && src.type == X86_OP_REG) {
            auto it = xmm.find(src.reg);
            std::pair<Held, Held> v = it == xmm.end() ? std::pair<Held, Held>{} : it->second;
            stored[*dst_ctx] = v.first;
            stored[*dst_ctx + 8] = v.second;
          } else {
            forget();
          }
          break;
        default:
          forget();
      }
    }
    auto variable = [&](int64_t field) -> uint64_t {
      auto it = stored.find(field);
      return it != stored.end() && it->second.kind == Held::ValueAt ? it->second.addr : 0;
    };
    out.body = variable(kBcBodyField);
    out.pc = variable(kBcPcField);
    for (int64_t field : {kSrcref40, kSrcref44})
      if (uint64_t s = variable(field)) {
        out.srcref = s;
        out.srcref_field = int(field);
      }
  } catch (const Error&) {
    return RBytecodeGlobals{};
  }
  return out;
}

std::vector<std::pair<uint64_t, uint64_t>> r_block_code_ranges(InterpMemory& mem,
                                                               uint64_t do_begin) {
  constexpr size_t kBlockBytes = 1024, kCalleeBytes = 256;
  std::vector<std::pair<uint64_t, uint64_t>> out;
  if (!do_begin) return out;
  try {
    out.push_back({do_begin, do_begin + kBlockBytes});
    decode(mem, do_begin, kBlockBytes, [&](const cs_insn& i, uint64_t) {
      const cs_x86& x = i.detail->x86;
      if (i.id == X86_INS_CALL && x.op_count == 1 && x.operands[0].type == X86_OP_IMM) {
        uint64_t target = uint64_t(x.operands[0].imm);
        out.push_back({target, target + kCalleeBytes});
      }
      return true;
    });
  } catch (const Error&) {
    return {};
  }
  return out;
}

uint64_t find_r_opcode_table(const ModuleList& modules, InterpMemory& mem) {
  constexpr size_t kDecodeBytes = 256;  // the lea comes before its search loop (~120 bytes)
  uint64_t fn = function_symbol_address(modules, "R_bcDecode");
  if (!fn) return 0;
  uint64_t table = 0;
  try {
    decode(mem, fn, kDecodeBytes, [&](const cs_insn& i, uint64_t next) {
      const cs_x86& x = i.detail->x86;
      if (i.id == X86_INS_LEA && x.op_count == 2 && x.operands[1].type == X86_OP_MEM &&
          x.operands[1].mem.base == X86_REG_RIP && x.operands[1].mem.index == X86_REG_INVALID)
        table = next + uint64_t(x.operands[1].mem.disp);
      return !table && i.id != X86_INS_RET;
    });
  } catch (const Error&) {
    return 0;
  }
  return table;
}

}  // namespace rwd
