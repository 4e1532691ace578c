// C expressions evaluated in a frame, for watch, hover, breakpoint conditions and the REPL:
// names (locals, arguments, globals, enumerators, registers $rip...), integer, float, char
// and string literals, . -> [] unary * & - ! ~, the binary arithmetic, shift, bitwise,
// comparison and logical operators, ?:, casts to named types and sizeof. Errors use gdb's
// wording ("No symbol \"foo\" in current context.").
#pragma once

#include <string>

#include "engine/errors.h"
#include "engine/symbols/variables.h"

namespace rwd {

/// An expression that cannot be parsed or evaluated; what() is gdb's message for it.
class ExpressionError : public Error {
 public:
  using Error::Error;
};

/// Evaluates `text` in frame `frame` of `vars`' stack. Reads memory but never writes it.
/// Throws ExpressionError.
Value evaluate_expression(const std::string& text, Target& target, FrameVariables& vars,
                          size_t frame);

/// Parses `text` only (for checking a condition when a breakpoint is set). Throws
/// ExpressionError on a syntax error.
void check_expression_syntax(const std::string& text);

}  // namespace rwd
