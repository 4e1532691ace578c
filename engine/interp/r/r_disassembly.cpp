// RReader::frame_code (r_frames.h): the byte code an R frame runs, disassembled with R's own
// opcode table (opinfo, r_bytecode_globals.h), its lines from the constant pool's
// srcrefsIndex, and the instruction the frame is at (its bcEval's currentpc).
#include <algorithm>
#include <unordered_map>

#include "engine/interp/r/r_bytecode_globals.h"
#include "engine/interp/r/r_frames.h"
#include "engine/interp/r/r_objects.h"

namespace rwd {

using namespace r_objects;

namespace {

constexpr int64_t kMaxWords = 1 << 20;  // instruction words read (8 MiB)
constexpr size_t kMaxConstants = 2000;
constexpr size_t kMaxOpcodes = 512;
constexpr size_t kConstantChars = 120;

/// R's opcode table at `table`: threaded-code address -> name and operand count.
std::unordered_map<uint64_t, std::pair<std::string, int>> read_opcodes(InterpMemory& mem,
                                                                       uint64_t table) {
  std::unordered_map<uint64_t, std::pair<std::string, int>> out;
  for (size_t i = 0; i < kMaxOpcodes; ++i) {
    uint64_t e = table + 24 * i;
    uint64_t addr = mem.u64(e), name = mem.u64(e + 16);
    int argc = mem.i32(e + 8);
    if (!name || !addr || argc < 0 || argc > 16) break;
    std::vector<uint8_t> b = mem.bytes(name, 32);
    auto end = std::find(b.begin(), b.end(), uint8_t(0));
    out[addr] = {std::string(b.begin(), end), argc};
  }
  // The first opcode is BCMISMATCH in every R with byte code: a check that this is the table.
  if (out.empty() || std::none_of(out.begin(), out.end(),
                                  [](const auto& o) { return o.second.first == "BCMISMATCH"; }))
    return {};
  return out;
}

}  // namespace

InterpCode RReader::frame_code(InterpMemory& mem, uint64_t frame,
                               const std::string& function) const {
  RObjects r{mem, g_.nil, g_.unbound, g_.na_string};
  InterpCode out;
  out.language = "r";
  out.function = function;
  // The frame's callee (the function context inside it): it saved the frame's bcpc.
  uint64_t inner = 0;
  bool found = false;
  uint64_t ctx = mem.u64(g_.global_context);
  for (int n = 0; ctx && n < kMaxContexts; ++n, ctx = mem.u64(ctx + kNextContext)) {
    int flag = mem.i32(ctx + kCallFlag);
    if (flag == 0) break;
    if (ctx == frame) {
      found = true;
      break;
    }
    if (flag & kCtxtFunction) inner = ctx;
  }
  if (!found) throw InterpReadError("the frame is not on R's stack here");
  uint64_t closure = mem.u64(frame + kCallFun);
  if (r.type(closure) != kClosure) {
    out.format = "C code";
    out.note = function +
               " is not R code: a builtin or special function, written in C (the "
               "native frames below it show where it is)";
    return out;
  }
  uint64_t body = r.cdr(closure);
  if (r.type(body) != kBytecode) {
    if (uint64_t srcref = r.attribute(closure, "srcref")) out.file = r.srcref_file(srcref);
    out.format = "AST";
    out.note = function +
               " is not byte-compiled: R's AST evaluator runs it (with the JIT on, R compiles "
               "a function at its first or second call; R_ENABLE_JIT=0 turns it off)";
    return out;
  }
  if (!g_.opcodes) throw Error("R's opcode table was not found in this libR (R_bcDecode)");
  auto ops = read_opcodes(mem, g_.opcodes);
  if (ops.empty()) throw Error("R's opcode table (found through R_bcDecode) did not read back");
  uint64_t code = r.car(body), consts = r.cdr(body);
  int64_t words = std::min<int64_t>(r.length(code) / 2, kMaxWords);  // BCODE: 8 bytes
  if (words < 1) throw InterpReadError("empty byte code");
  std::vector<uint8_t> raw = mem.bytes(code + kData, size_t(words) * 8);
  auto word = [&](int64_t w) {
    uint64_t v = 0;
    std::copy_n(raw.begin() + w * 8, 8, reinterpret_cast<uint8_t*>(&v));
    return v;
  };
  out.format = "R byte code version " + std::to_string(int32_t(word(0)));
  // The constant pool, its srcrefsIndex (a line for each instruction word).
  int64_t nconsts = r.length(consts);
  std::vector<int32_t> index;
  for (int64_t i = 0; i < nconsts; ++i) {
    uint64_t c = mem.u64(consts + kData + 8 * uint64_t(i));
    if (size_t(i) < kMaxConstants) {
      std::string type;
      std::string v = r.format(c, type);
      if (v.size() > kConstantChars) {
        v.resize(kConstantChars);
        v += "...";
      }
      out.constants.push_back(v + "  (" + type + ")");
    }
    if (r.type(c) == kInt && index.empty()) {
      uint64_t cls = r.attribute(c, "class");
      if (cls && r.first_string(cls) == "srcrefsIndex") {
        std::vector<uint8_t> b = mem.bytes(c + kData, size_t(std::min(r.length(c), words)) * 4);
        index.resize(b.size() / 4);
        std::copy(b.begin(), b.end(), reinterpret_cast<uint8_t*>(index.data()));
      }
    }
  }
  std::unordered_map<int32_t, int> line_of;  // constant index -> its srcref's line
  auto line = [&](int64_t w) {
    if (w >= int64_t(index.size())) return 0;
    int32_t k = index[size_t(w)];
    if (k < 0 || k >= nconsts) return 0;
    auto [it, fresh] = line_of.try_emplace(k, 0);
    if (fresh) try {
        uint64_t s = mem.u64(consts + kData + 8 * uint64_t(k));
        if (r.type(s) == kInt && r.length(s) >= 4) {
          it->second = mem.i32(s + kData);
          if (out.file.empty()) out.file = r.srcref_file(s);
        }
      } catch (const InterpReadError&) {
      }
    return it->second;
  };
  for (int64_t w = 1; w < words;) {
    InterpInstruction ins;
    ins.offset = uint64_t(w);
    ins.line = line(w);
    auto op = ops.find(word(w));
    if (op == ops.end()) {
      // Not an opcode: the code is not what it was read as (changing under R's hands).
      ins.opcode = "?? " + hex(word(w));
      out.instructions.push_back(std::move(ins));
      break;
    }
    ins.opcode = op->second.first;
    for (int k = 0; k < op->second.second && w + 1 + k < words; ++k)
      ins.operands.push_back(int32_t(word(w + 1 + k)));
    out.instructions.push_back(std::move(ins));
    w += 1 + op->second.second;
  }
  // Where the frame is: its callee's saved bcpc (the call), or R_BCpc for the innermost;
  // only when that bcEval ran this byte code (not a promise's forced under the frame).
  try {
    uint64_t ran = mem.u64(inner ? inner + kBcBody : g_.bcbody);
    uint64_t pc_at = inner ? mem.u64(inner + kBcPc) : (g_.bcpc ? mem.u64(g_.bcpc) : 0);
    int64_t relpc = -1;
    if (inner && srcref_field(mem) == kSrcref44) relpc = mem.i64(inner + kRelPc44);
    if (relpc <= 0 && pc_at) relpc = int64_t(mem.u64(pc_at) - (code + kData)) / 8;
    const InterpInstruction* last = out.instructions.empty() ? nullptr : &out.instructions.back();
    if ((g_.bcbody || inner) && ran == body && relpc > 0 && last &&
        uint64_t(relpc) <= last->offset + last->operands.size()) {
      auto at =
          std::upper_bound(out.instructions.begin(), out.instructions.end(), uint64_t(relpc),
                           [](uint64_t pc, const InterpInstruction& i) { return pc < i.offset; });
      if (at != out.instructions.begin()) out.current = std::prev(at)->offset;
    }
  } catch (const InterpReadError&) {
  }
  return out;
}

}  // namespace rwd
