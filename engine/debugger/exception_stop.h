// What a stop at a script's exception tells (a Python exception, an R error): DebugStop
// carries it, DAP's stopped event and exceptionInfo show it.
#pragma once

#include <string>

namespace rwd {

/// The exception a stop is at.
struct ExceptionStop {
  std::string type;       ///< "ValueError"; "error" for an R error
  std::string message;    ///< str() of a Python exception; an R error's message
  bool uncaught = false;  ///< it ends its thread or the program unhandled
  /// The stop is where an uncaught exception is reported, not its raise: the raise came
  /// before where the forward continue began (reverse-continue goes to it).
  bool at_report = false;
  std::string file;  ///< where it was raised: a Python frame's co_filename ("" when unknown)
  int line = 0;      ///< and its line (0 when unknown)
};

}  // namespace rwd
