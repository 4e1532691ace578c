// python_frame_code (python_code.h): the bytecode a CPython frame runs, as the adaptive
// interpreter holds it (co_code_adaptive: specialized instructions, inline caches), decoded
// with that version's own opcode table (python_opcodes.inc, generated from its dis module).
#include <algorithm>
#include <cstdint>

#include "engine/interp/python/python_code.h"
#include "engine/interp/python/python_frames.h"

namespace rwd {

namespace {

/// One CPython minor version's opcodes: name ("" unused), inline cache entries (code units
/// after the instruction), and whether it takes an argument.
struct PythonOpcodeTable {
  int minor;
  const char* names[256];
  uint8_t caches[256];
  uint8_t has_arg[256];
};

#include "engine/interp/python/python_opcodes.inc"

constexpr int64_t kMaxUnits = 1 << 20;  // code units read (2 MiB)
constexpr int64_t kMaxConstants = 2000;
constexpr size_t kConstantChars = 120;

const PythonOpcodeTable* opcode_table(int minor) {
  for (const PythonOpcodeTable& t : kPythonOpcodeTables)
    if (t.minor == minor) return &t;
  return nullptr;
}

}  // namespace

InterpCode python_frame_code(InterpMemory& mem, const PythonReader& reader,
                             const InterpFrame& frame) {
  const PythonLayout& l = reader.layout();
  std::string version = reader.version();
  int minor = std::stoi(version.substr(version.find('.') + 1));
  const PythonOpcodeTable* ops = opcode_table(minor);
  if (!ops) throw Error("no opcode table for CPython " + version);
  uint64_t code = reader.frame_code(mem, frame.address);
  PythonCode c = read_python_code(mem, l, code);
  InterpCode out;
  out.language = "python";
  out.function = frame.function;
  out.file = c.file;
  out.format = "CPython " + version + " bytecode (adaptive)";
  int64_t units = std::min(mem.i64(code + py::kObSize), kMaxUnits);
  if (units <= 0) throw InterpReadError("a code object without bytecode");
  uint64_t bytecode = code + uint64_t(l.code_code_adaptive);
  std::vector<uint8_t> b = mem.bytes(bytecode, size_t(units) * 2);
  // The line table's entries are in bytecode order, as the instructions: one pass.
  size_t entry = 0;
  auto line_at = [&](int64_t unit) {
    while (entry < c.lines.size() && uint64_t(unit) >= c.lines[entry].start + c.lines[entry].length)
      ++entry;
    if (entry < c.lines.size() && uint64_t(unit) >= c.lines[entry].start)
      return c.lines[entry].line;
    return 0;
  };
  uint32_t extended = 0;
  for (int64_t i = 0; i < units;) {
    uint8_t op = b[size_t(2 * i)], arg = b[size_t(2 * i + 1)];
    InterpInstruction ins;
    ins.offset = uint64_t(2 * i);  // bytes, as dis shows it
    ins.line = line_at(i);
    ins.opcode = ops->names[op][0] ? ops->names[op] : "<" + std::to_string(op) + ">";
    uint32_t oparg = extended << 8 | arg;
    if (ops->has_arg[op]) ins.operands.push_back(int64_t(oparg));
    extended = ins.opcode.starts_with("EXTENDED_ARG") ? oparg : 0;
    out.instructions.push_back(std::move(ins));
    i += 1 + ops->caches[op];
  }
  // co_consts, as the Variables view shows values.
  uint64_t consts = mem.u64(code + uint64_t(l.code_consts));
  int64_t n = std::min(mem.i64(consts + py::kObSize), kMaxConstants);
  for (int64_t k = 0; k < n; ++k) {
    std::string type, v;
    try {
      v = python_repr(mem, l, mem.u64(consts + uint64_t(l.tuple_items) + 8 * uint64_t(k)), type);
    } catch (const InterpReadError&) {
      v = "<unreadable>";
    }
    if (v.size() > kConstantChars) {
      v.resize(kConstantChars);  // (not substr + "...": a false -Warray-bounds in GCC 12)
      v += "...";
    }
    out.constants.push_back(v + "  (" + type + ")");
  }
  // Where the frame is: the instruction its instruction pointer names (3.11, 3.12:
  // prev_instr, the last one started; 3.13: instr_ptr); a caller's is its call.
  try {
    uint64_t instr = mem.u64(reader.step_word(frame.address));
    if (instr >= bytecode && instr < bytecode + 2 * uint64_t(units)) {
      uint64_t at = instr - bytecode;
      auto it =
          std::upper_bound(out.instructions.begin(), out.instructions.end(), at,
                           [](uint64_t pc, const InterpInstruction& i) { return pc < i.offset; });
      if (it != out.instructions.begin()) out.current = std::prev(it)->offset;
    }
  } catch (const InterpReadError&) {
  }
  return out;
}

}  // namespace rwd
