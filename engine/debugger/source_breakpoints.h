// User breakpoints as a source-level debugger has them (DAP's SourceBreakpoint and
// FunctionBreakpoint): a place (file:line or a function name) bound to code addresses,
// with an optional condition, hit condition and log message (a logpoint).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/symbols/module_list.h"
#include "engine/timeline/code_site.h"
#include "engine/timeline/timeline_types.h"

namespace rwd {

/// What the user asked for.
struct BreakpointSpec {
  std::string file;           ///< source path or a suffix of one ("demo.c"); empty for functions
  uint32_t line = 0;          ///< 1-based source line (file breakpoints)
  std::string function;       ///< function name ("main", "ns::Class::method"); empty for lines
  uint64_t address = 0;       ///< an instruction's runtime address (instruction breakpoints)
  std::string condition;      ///< a C expression; stop only when it is non-zero
  std::string hit_condition;  ///< "N" or ">= N", "> N", "== N", "< N", "<= N", "% N"
  std::string log_message;    ///< a logpoint's text, "{expr}" replaced by the value
};

/// The three kinds of user breakpoint, as DAP groups them (one set*Breakpoints request each).
enum class BreakpointKind : uint8_t { Source, Function, Instruction };

/// Which kind `spec` is: an address makes an instruction breakpoint, a function name a
/// function breakpoint, anything else a source line.
BreakpointKind breakpoint_kind(const BreakpointSpec& spec);

/// A breakpoint and where it bound.
struct Breakpoint {
  int id = 0;
  BreakpointSpec spec;
  std::vector<uint64_t> addrs;  ///< runtime addresses in the current process (may be empty)
  /// Where it is armed: the code sites of every binding so far, in any process (sorted).
  /// Empty: pending, bound nowhere yet.
  std::vector<CodeSite> sites;
  uint32_t line = 0;    ///< the line it bound to (may follow the requested one)
  std::string file;     ///< the full source path it bound in ("" for pending)
  uint64_t hits = 0;    ///< times its condition held so far
  std::string message;  ///< why it is unverified, or a note on how it bound
};

/// Binds a breakpoint to addresses in `modules`: a line in every function and inlined copy
/// that has code for it (moved to the next line with code, as gdb does), a function at the
/// end of its prologue in every module that defines it, an instruction breakpoint at its
/// address (with the source line there, when known). Fills addrs (runtime, at each module's
/// bias), line, file and message. With `sites`, also gives the code site of each binding
/// but an instruction breakpoint's (sorted, without repeats): the module's file and offset.
void bind_breakpoint(Breakpoint& bp, const std::vector<std::shared_ptr<Module>>& modules,
                     std::vector<CodeSite>* sites = nullptr);

/// True when `hits` (already counting this hit) satisfies `hit_condition`; an empty
/// condition always holds. Throws Error on a malformed condition.
bool hit_condition_holds(const std::string& hit_condition, uint64_t hits);

/// One arrival at breakpoint `bp`, native or in a script: when its condition holds (`holds`,
/// called only when it has one; an Error it throws stops there, as gdb does, with the reason
/// in `error`), its hit is counted (with `count`) and, once its hit condition holds, a
/// logpoint appends `format()` (its message with the values filled in) to `log`, any other
/// breakpoint appends its id to `ids`.
void arrive_at(Breakpoint& bp, bool count, const std::function<bool()>& holds,
               const std::function<std::string()>& format, std::vector<int>& ids,
               std::vector<std::string>& log, std::string& error);

/// Whether a breakpoint's file `wanted` and a script's file as its interpreter names it
/// (Python's co_filename, R's srcfile) are the same script: equal, or one a relative path
/// that ends the other at a '/'. Names in angle brackets ("<string>") match only themselves.
bool same_source_file(const std::string& wanted, const std::string& code_file);

/// What a stop at one of a script breakpoint's watchpoints (python_breakpoints.h,
/// r_breakpoints.h) came to.
struct ScriptBreakpointOutcome {
  bool stop = false;  ///< report `at` (a breakpoint hit, or what ended the landing early)
  StopInfo at;
  std::vector<int> ids;          ///< the breakpoints hit
  std::vector<std::string> log;  ///< logpoint messages
  std::string error;             ///< a condition that could not be evaluated (it stops)
};

}  // namespace rwd
