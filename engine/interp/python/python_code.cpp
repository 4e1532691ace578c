#include "engine/interp/python/python_code.h"

namespace rwd {

namespace {

constexpr int64_t kMaxConsts = 1 << 16;     // a longer co_consts is garbage
constexpr int64_t kMaxLineTable = 1 << 24;  // bytes

/// Indexes into code.lines of the entries that begin a run of some line, with that line,
/// leaving out a function's header.
std::vector<std::pair<size_t, int>> run_starts(const PythonCode& code) {
  std::vector<std::pair<size_t, int>> out;
  bool header = code.qualname != "<module>";
  int previous = -1;
  for (size_t i = 0; i < code.lines.size(); ++i) {
    int line = code.lines[i].line;
    if (header && line == code.firstlineno) continue;
    header = false;
    if (line != 0 && line != previous) out.emplace_back(i, line);
    if (line != 0) previous = line;
  }
  return out;
}

}  // namespace

PythonCode read_python_code(InterpMemory& mem, const PythonLayout& l, uint64_t code) {
  if (python_type_name(mem, code) != "code")
    throw InterpReadError("no code object at " + hex(code));
  PythonCode c;
  c.address = code;
  c.file = python_str(mem, l, mem.u64(code + uint64_t(l.code_filename)), 4096);
  c.qualname = python_str(mem, l, mem.u64(code + uint64_t(l.code_qualname)), 512);
  c.firstlineno = mem.i32(code + uint64_t(l.code_firstlineno));
  uint64_t table = mem.u64(code + uint64_t(l.code_linetable));
  int64_t table_len = mem.i64(table + py::kObSize);
  if (table_len < 0 || table_len > kMaxLineTable) throw InterpReadError("a bad line table");
  c.lines =
      python_line_entries(mem.bytes(table + py::kBytesData, size_t(table_len)), c.firstlineno);
  uint64_t consts = mem.u64(code + uint64_t(l.code_consts));
  int64_t n = mem.i64(consts + py::kObSize);
  if (n < 0 || n > kMaxConsts) throw InterpReadError("a bad co_consts");
  for (int64_t i = 0; i < n; ++i) {
    uint64_t item = mem.u64(consts + uint64_t(l.tuple_items) + 8 * uint64_t(i));
    if (item && python_type_name(mem, item) == "code") c.nested.push_back(item);
  }
  return c;
}

std::vector<uint64_t> python_line_starts(const PythonCode& code, const PythonLayout& l, int line) {
  std::vector<uint64_t> out;
  uint64_t bytecode = code.address + uint64_t(l.code_code_adaptive);
  for (auto [i, at] : run_starts(code))
    if (at == line) out.push_back(bytecode + 2 * code.lines[i].start);
  return out;
}

int python_next_line_with_code(const PythonCode& code, int line) {
  int best = 0;
  for (auto [i, at] : run_starts(code))
    if (at >= line && (best == 0 || at < best)) best = at;
  return best;
}

}  // namespace rwd
