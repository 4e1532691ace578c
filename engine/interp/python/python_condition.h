// Breakpoint conditions and logpoint messages in a Python frame, evaluated from the frame's
// locals as rewind reads them out of memory (no code runs in the replayed interpreter).
// Conditions take Python's syntax for what a debugger's condition usually is: comparisons of
// locals with literals or other locals, joined by `and`, `or`, `not` and parentheses.
#pragma once

#include <string>
#include <vector>

#include "engine/interp/interp_frame.h"

namespace rwd {

/// Whether `condition` holds over `locals` (InterpFrame::locals). The grammar:
///   expr := and ('or' and)* ; and := not ('and' not)* ; not := 'not' not | cmp
///   cmp := operand (('==' | '!=' | '<' | '<=' | '>' | '>=' | 'is' | 'is not') operand)?
///   operand := NAME | int | float | 'str' | "str" | True | False | None | '(' expr ')'
/// A bare operand is tested for truth as Python does (0, '', None, False are false). Numbers
/// (int, float, bool) compare by value, str with str by code points; `is` compares like `==`
/// for None, True and False. Throws Error when the condition is malformed, names no local
/// of the frame, or compares what cannot be compared from the values read (a list with an
/// int, the truth of an object).
bool python_condition_holds(const std::string& condition,
                            const std::vector<InterpVariable>& locals);

/// Checks `condition`'s syntax only (no locals needed). Throws Error naming the fault.
void check_python_condition(const std::string& condition);

/// A logpoint's message with each `{name}` replaced by that local's value as the Variables
/// view shows it (repr); a name that is no local gives "<no local NAME>".
std::string python_log_message(const std::string& message,
                               const std::vector<InterpVariable>& locals);

}  // namespace rwd
