#include "engine/interp/interp_code.h"

#include <cstdio>

namespace rwd {

std::string format_interp_code(const InterpCode& code) {
  std::string out = code.function + " — " + (code.format.empty() ? "byte code" : code.format);
  if (!code.file.empty()) out += ", " + code.file;
  out += "\n";
  if (!code.note.empty()) return out + "\n" + code.note + "\n";
  out += "\n     line  offset  instruction\n";
  char buf[64];
  for (const InterpInstruction& i : code.instructions) {
    bool here = code.current && *code.current == i.offset;
    std::snprintf(buf, sizeof buf, "%s %5s  %6llu  ", here ? "=>" : "  ",
                  i.line ? std::to_string(i.line).c_str() : "", (unsigned long long)i.offset);
    out += buf + i.opcode;
    for (size_t k = 0; k < i.operands.size(); ++k)
      out += (k ? ", " : " ") + std::to_string(i.operands[k]);
    out += "\n";
  }
  if (!code.constants.empty()) {
    out += "\nconstants\n";
    for (size_t k = 0; k < code.constants.size(); ++k) {
      std::snprintf(buf, sizeof buf, "  %6zu  ", k);
      out += buf + code.constants[k] + "\n";
    }
  }
  return out;
}

}  // namespace rwd
