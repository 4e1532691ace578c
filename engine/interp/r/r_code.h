// Where the lines of an R function start, read from a stopped GNU R 4.x (no help from R):
// what R line breakpoints bind to (engine/debugger/r_breakpoints.h).
//
// AST code: the `{` calls of a body keep their statements' srcrefs in a "srcref" attribute
// (one per statement, after the brace's own), and the AST evaluator sets R_Srcref to exactly
// that object as each statement starts (do_begin in src/main/eval.c). Byte code (the JIT's
// or compiler::cmpfun's): the constant pool holds the srcrefs and a "srcrefsIndex" vector
// naming the srcref of each instruction word; bcEval fetches each instruction's word as it
// runs it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rwd {

/// The code of one R function body (a closure's, or a byte-code object) by line.
struct RCode {
  std::string file;       ///< the file its srcrefs point into (absolute when R knew its wd)
  bool bytecode = false;  ///< a BCODESXP, else an AST body
  /// Source line -> where the line starts. AST: the srcref objects of the statements that
  /// start on it (the values R_Srcref takes there). Byte code: the address of the first
  /// instruction word of the line's first run of instructions.
  std::map<int, std::vector<uint64_t>> starts;
  uint64_t code_begin = 0, code_end = 0;  ///< byte code: its instruction words, [begin, end)
  /// AST: each statement's srcref -> the element of its `{`'s srcref list that holds it,
  /// which the evaluator reads as the statement starts (getSrcref in do_begin).
  std::map<uint64_t, uint64_t> slots;
  /// Byte code: each start's instruction word -> its content (a threaded-code address) as read.
  std::map<uint64_t, uint64_t> words;
};

}  // namespace rwd
