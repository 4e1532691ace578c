// Breakpoint conditions and logpoint messages in a script frame (Python or R), evaluated from
// the frame's locals as rewind reads them out of memory (no code runs in the replayed
// interpreter). Conditions take the script language's syntax for what a debugger's condition
// usually is: comparisons of locals with literals or other locals, joined by the language's
// and, or, not and parentheses.
#pragma once

#include <string>
#include <vector>

#include "engine/interp/interp_frame.h"

namespace rwd {

/// Which language a condition is written in.
enum class ScriptLanguage {
  Python,  ///< `and`, `or`, `not`, True, False, None, 'str' or "str"
  R,       ///< `&&` or `&`, `||` or `|`, `!`, TRUE, FALSE, T, F, NULL, 2L, "str" or 'str'
};

/// Whether `condition` holds over `locals` (InterpFrame::locals). The grammar (Python's
/// words; R's in ScriptLanguage):
///   expr := and ('or' and)* ; and := not ('and' not)* ; not := 'not' not | cmp
///   cmp := operand (('==' | '!=' | '<' | '<=' | '>' | '>=' | 'is' | 'is not') operand)?
///   operand := NAME | int | float | 'str' | "str" | True | False | None | '(' expr ')'
/// A bare operand is tested for truth as Python does (0, '', None, False are false). Numbers
/// (int, float, bool) compare by value, str with str by code points; `is` compares like `==`
/// for None, True and False. Throws Error when the condition is malformed, names no local
/// of the frame, or compares what cannot be compared from the values read (a list with an
/// int, the truth of an object).
/// R: a bare operand is true when it is a non-zero number or TRUE; a length-one logical,
/// integer ("3L"), numeric or character local compares by value, longer vectors not at all.
bool script_condition_holds(ScriptLanguage lang, const std::string& condition,
                            const std::vector<InterpVariable>& locals);

/// Checks `condition`'s syntax only (no locals needed). Throws Error naming the fault.
void check_script_condition(ScriptLanguage lang, const std::string& condition);

/// A logpoint's message with each `{name}` replaced by that local's value as the Variables
/// view shows it (Python's repr, R's print form); a name that is no local gives
/// "<no local NAME>".
std::string script_log_message(const std::string& message,
                               const std::vector<InterpVariable>& locals);

}  // namespace rwd
