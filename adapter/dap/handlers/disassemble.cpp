// The disassemble request: instructions around an address, with their symbols and source
// lines.
#include "adapter/dap/handlers/dap_handlers.h"
#include "engine/symbols/call_stack.h"
#include "engine/symbols/disassembler.h"

namespace rwd::handlers {

using nlohmann::json;

namespace {

constexpr size_t kMaxInstructions = 10000;        // disassemble: instructions per request
constexpr int64_t kMaxInstructionOffset = 65536;  // disassemble: |instructionOffset| at most

std::string hex_bytes(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    if (!s.empty()) s += ' ';
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

}  // namespace

void disassemble(DapContext& c, const dap::DisassembleArguments& a, DapRequest& r) {
  Debugger& d = c.debugger();
  uint64_t addr = parse_address(a.memory_reference) + uint64_t(a.offset);
  int64_t skip = a.instruction_offset;
  if (skip < -kMaxInstructionOffset || skip > kMaxInstructionOffset)
    throw RequestError("instructionOffset must be within " + std::to_string(kMaxInstructionOffset) +
                       " instructions of the address");
  size_t count = std::min<size_t>(a.instruction_count, kMaxInstructions);
  bool symbols = a.resolve_symbols;
  pid_t tid = c.timeline->current().tid;
  ModuleList& mods = d.modules();

  // Instructions before `addr` (a negative instructionOffset) need a start that decodes in
  // step with it: the containing function's start when it is close, else the first byte of
  // a window that lands exactly on `addr`.
  size_t before = skip < 0 ? size_t(-skip) : 0;
  uint64_t back = before * 15 + 16;
  uint64_t base = addr > back ? addr - back : 0;
  size_t after = count + size_t(skip > 0 ? skip : 0);
  std::vector<uint8_t> bytes = c.timeline->read_memory(tid, base, size_t(addr - base) + after * 15);
  std::vector<Instruction> decoded;
  if (bytes.size() > addr - base) {
    std::vector<uint64_t> starts;
    if (Module* m = mods.module_at(addr))
      if (const Symbol* s = m->symbols().function_at(m->to_link(addr)))
        if (m->to_runtime(s->addr) >= base) starts.push_back(m->to_runtime(s->addr));
    for (uint64_t s = base; s < base + 16 && s < addr; ++s) starts.push_back(s);
    uint64_t start = before ? sync_start(base, bytes, addr, starts) : addr;
    std::vector<uint8_t> from(bytes.begin() + long(start - base), bytes.end());
    decoded = decode_instructions(start, from, SIZE_MAX);
  }
  // The window: `before` instructions ending at addr, then the rest.
  size_t at = 0;
  while (at < decoded.size() && decoded[at].addr < addr) ++at;
  std::vector<Instruction> window;
  size_t have_before = std::min(at, before);
  for (size_t i = before; i > have_before; --i) {  // nothing readable there: invalid slots
    Instruction bad;
    bad.addr = addr - i;
    bad.text = "??";
    bad.valid = false;
    window.push_back(bad);
  }
  for (size_t i = at - have_before; i < decoded.size(); ++i) window.push_back(decoded[i]);
  size_t first = skip > 0 ? size_t(skip) : 0;
  json out = json::array();
  std::string last_file;
  for (size_t i = first; out.size() < count; ++i) {
    json j;
    if (i < window.size()) {
      const Instruction& in = window[i];
      j = {{"address", hex(in.addr)},
           {"instructionBytes", hex_bytes(in.bytes)},
           {"instruction", in.text}};
      if (!in.valid) j["presentationHint"] = "invalid";
      if (symbols)
        if (Module* m = mods.module_at(in.addr))
          if (const Symbol* s = m->symbols().function_at(m->to_link(in.addr)))
            j["symbol"] = without_parameters(s->demangled);
      if (auto line = source_line_at(mods, in.addr)) {
        j["location"] = c.source(line->file);
        j["line"] = c.line_out(line->line);
        if (line->column) j["column"] = line->column;
      }
    } else {  // past the readable memory
      uint64_t end = window.empty()
                         ? addr
                         : window.back().addr + std::max<uint64_t>(window.back().bytes.size(), 1);
      uint64_t a = end + (i - window.size());
      j = {{"address", hex(a)}, {"instruction", "??"}, {"presentationHint", "invalid"}};
    }
    out.push_back(j);
  }
  r.respond({{"instructions", out}});
}

}  // namespace rwd::handlers
