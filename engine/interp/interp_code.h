// A script function's byte code as the code view shows it (DAP rewind/interpreterCode): read
// out of a stopped interpreter's memory, disassembled with the interpreter's own opcode names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rwd {

/// One instruction of a function's byte code.
struct InterpInstruction {
  /// R: index of its opcode word in the code vector; Python: byte offset in the bytecode.
  uint64_t offset = 0;
  std::string opcode;             ///< the interpreter's name: "GETVAR", "RETURN"
  std::vector<int64_t> operands;  ///< as stored (R: constant pool indices, labels, counts)
  int line = 0;                   ///< its source line (R: srcrefsIndex), 0 when unknown
};

/// The byte code a script frame runs.
struct InterpCode {
  std::string language;  ///< "r" or "python"
  std::string function;  ///< as the stack shows it
  std::string file;      ///< the source file its lines are in ("" when none)
  std::string format;    ///< "R byte code version 12", "CPython 3.12.1 bytecode (adaptive)"
  std::vector<InterpInstruction> instructions;
  /// The constant pool, each formatted as the Variables view formats a value, with its type
  /// ("n  (symbol)").
  std::vector<std::string> constants;
  /// Offset of the instruction the frame runs (its pc; a caller's: the call); nullopt when
  /// not known.
  std::optional<uint64_t> current;
  /// Set when the frame runs no byte code (an AST-interpreted R function): why, in a line.
  std::string note;
};

/// The listing as a text document: a header, one line per instruction ("=>" marks the
/// current one; line number, offset, opcode, operands), then the constant pool.
std::string format_interp_code(const InterpCode& code);

}  // namespace rwd
