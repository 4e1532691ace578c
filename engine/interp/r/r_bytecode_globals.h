// Where GNU R keeps the state of its byte-code interpreter. R_BCbody (the byte code running)
// and R_BCpc (the address of the running bcEval's `currentpc`, the word it writes at the
// start of every instruction: NEXT() in src/main/eval.c) are hidden globals, absent from
// libR.so's dynamic symbols and Debian's build has no symbol table. The exported
// Rf_begincontext copies both into the new context (RCNTXT's bcbody and bcpc fields), so
// its machine code names them: they are found by following its loads to those stores.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/interp/interp_frame.h"

namespace rwd {

/// Runtime addresses of R's hidden byte-code globals; 0 when not found.
struct RBytecodeGlobals {
  uint64_t body = 0;     ///< &R_BCbody: the BCODESXP the innermost bcEval runs
  uint64_t pc = 0;       ///< &R_BCpc: holds &currentpc of the innermost bcEval (a stack word)
  uint64_t srcref = 0;   ///< &R_Srcref as Rf_begincontext saves it (a check of the analysis)
  int srcref_field = 0;  ///< RCNTXT's srcref offset it was stored at: 368 (R 4.0-4.3), 384
};

/// Reads Rf_begincontext (exported by libR.so) in `mem` and follows its register loads
/// (rip-relative lea, GOT loads, 8-byte and 16-byte moves) to its stores into the context in
/// its first argument: the values stored at bcbody (offset 312) and bcpc (320) name R_BCbody
/// and R_BCpc. Returns zeros when the function is not found or its code does not have that
/// shape (another compiler's build); never throws for bad code, only reads memory.
RBytecodeGlobals find_r_bytecode_globals(const ModuleList& modules, InterpMemory& mem);

/// R's opcode table (opinfo in src/main/eval.c: per opcode its threaded-code address, 8
/// bytes; its operand count, an int padded to 8; its name, a char pointer: 24 bytes each),
/// filled as R starts. Found through the exported R_bcDecode, which searches it: the first
/// rip-relative lea of its code. 0 when not found; never throws.
uint64_t find_r_opcode_table(const ModuleList& modules, InterpMemory& mem);

/// Where the code that reads a statement's srcref as `{` starts it may be (do_begin in
/// src/main/eval.c calls getSrcref, which Debian's build does not inline): [start, end)
/// ranges covering the first 1,024 bytes of do_begin at `do_begin` and the first 256 of each
/// function it calls directly. Empty when the code cannot be read.
std::vector<std::pair<uint64_t, uint64_t>> r_block_code_ranges(InterpMemory& mem,
                                                               uint64_t do_begin);

}  // namespace rwd
