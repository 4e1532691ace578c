#include "engine/symbols/disassembler.h"

#include "engine/arch/capstone_api.h"
#include "engine/errors.h"

namespace rwd {

namespace {

/// A capstone handle for x86-64 in AT&T syntax, closed when it goes.
class Capstone {
 public:
  Capstone() {
    if (capstone::open(CS_ARCH_X86, CS_MODE_64, &h_) != CS_ERR_OK)
      throw Error("cannot open the capstone disassembler");
    capstone::option(h_, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
  }
  ~Capstone() { capstone::close(&h_); }
  Capstone(const Capstone&) = delete;
  Capstone& operator=(const Capstone&) = delete;
  csh handle() const { return h_; }

 private:
  csh h_ = 0;
};

}  // namespace

std::vector<Instruction> decode_instructions(uint64_t addr, const std::vector<uint8_t>& bytes,
                                             size_t max) {
  Capstone cs;
  std::vector<Instruction> out;
  cs_insn* insn = capstone::malloc(cs.handle());
  const uint8_t* code = bytes.data();
  size_t size = bytes.size();
  uint64_t pc = addr;
  while (out.size() < max && size > 0) {
    const uint8_t* before = code;
    if (capstone::disasm_iter(cs.handle(), &code, &size, &pc, insn)) {
      Instruction i;
      i.addr = insn->address;
      i.bytes.assign(insn->bytes, insn->bytes + insn->size);
      i.text = insn->mnemonic;
      if (insn->op_str[0]) i.text += std::string(" ") + insn->op_str;
      out.push_back(std::move(i));
      continue;
    }
    // Fifteen bytes is the longest x86 instruction: fewer left may be a truncated one.
    if (size < 15) break;
    Instruction bad;
    bad.addr = pc;
    bad.bytes = {*before};
    bad.text = "(bad)";
    bad.valid = false;
    out.push_back(bad);
    code = before + 1;
    size -= 1;
    pc += 1;
  }
  capstone::free(insn, 1);
  return out;
}

uint64_t sync_start(uint64_t base, const std::vector<uint8_t>& bytes, uint64_t addr,
                    const std::vector<uint64_t>& starts) {
  for (uint64_t start : starts) {
    if (start >= addr || start < base || addr > base + bytes.size()) continue;
    std::vector<uint8_t> part(bytes.begin() + long(start - base),
                              bytes.begin() + long(addr - base));
    auto run = decode_instructions(start, part, SIZE_MAX);
    if (!run.empty() && run.back().addr + run.back().bytes.size() == addr) return start;
  }
  return addr;
}

}  // namespace rwd
