// The R stack of a stopped GNU R 4.x interpreter, read from its memory with no help from it
// (docs/interpreter-frames.md §2): R_GlobalContext -> RCNTXT chain, function
// contexts named from their call, lines from srcrefs (AST, and bytecode through the constant
// pool's srcrefsIndex), locals from the closure environment.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/interp/interp_code.h"
#include "engine/interp/interp_frame.h"
#include "engine/interp/r/r_code.h"
#include "engine/symbols/module_list.h"

namespace rwd {

/// A GNU R interpreter found in a process (libR.so or an R binary exporting its globals).
class RReader {
 public:
  /// Looks for R's exported globals (R_GlobalContext, R_NilValue, R_UnboundValue,
  /// R_InBCInterpreter, R_Srcref). nullopt when the process is not R, or R is not
  /// initialized yet.
  static std::optional<RReader> find(const ModuleList& modules, InterpMemory& mem);

  /// The R function frames, innermost first (the calls sys.calls() would list, reversed);
  /// empty before R runs code. RCNTXT's layout differs between R 4.0-4.3 and 4.4+: the one
  /// whose saved srcrefs are all valid is used. A frame that cannot be read ends the stack
  /// with its `error` set. The innermost byte-compiled frame's
  /// line comes from the hidden R_BCpc and R_BCbody (r_bytecode_globals.h).
  /// Each frame's `step_word` is the word whose writes mark the start of its next piece of
  /// code: for a byte-compiled frame its bcEval's `currentpc` (written at every instruction),
  /// for an AST frame R_Srcref (written at every statement of a `{`, by any AST frame); 0
  /// when R's byte-code globals were not found (r_bytecode_globals.h) and the frame is the
  /// innermost byte-code one, which then has no line either.
  /// Only the innermost `with_locals` frames get their locals (a cheaper read).
  std::vector<InterpFrame> stack(InterpMemory& mem, size_t with_locals = SIZE_MAX) const;

  /// The globals a line stepper follows (r_stepper.h); 0 where unknown.
  struct StepGlobals {
    uint64_t srcref = 0;   ///< &R_Srcref: written at each AST statement, call and return
    uint64_t context = 0;  ///< &R_GlobalContext: written at each context push and pop
    uint64_t bcpc = 0;     ///< &R_BCpc: written as each bcEval starts and ends
    /// RCNTXT's returnValue offset (after srcref and browserfinish), which R_execClosure sets
    /// as the call's body ends (normally or by return()); 0 when the layout is not known.
    int return_value_field = 0;
  };
  StepGlobals step_globals() const {
    return {g_.srcref, g_.global_context, g_.bcpc, g_.srcref_field ? g_.srcref_field + 16 : 0};
  }

  /// Whether `value`, just written to R_Srcref over `before`, starts a statement of the
  /// innermost R function (do_begin's write) rather than marking a call, a return or a
  /// switch into or out of the byte-code interpreter (a write over R_InBCInterpreter puts
  /// back what a bcEval replaced): a srcref that changes R_Srcref, other than those
  /// the contexts down to the innermost function's saved (restored as a loop or the call
  /// ends) and the innermost closure's own (set as it starts and as its bcEval ends). A
  /// recursive call on the line being stepped is the one case misread: its statement on
  /// that line looks like a return.
  bool starts_statement(InterpMemory& mem, uint64_t value, uint64_t before) const;

  /// Whether `value`, just written to R_Srcref, is the srcref the innermost function context
  /// saved as it began: R_execClosure puts it back as the call returns, just before the
  /// context is popped.
  bool returning(InterpMemory& mem, uint64_t value) const;

  /// What a context (RCNTXT) at `ctx` is, for telling calls from other context changes.
  struct ContextInfo {
    bool function = false;    ///< a closure call (CTXT_FUNCTION)
    bool has_source = false;  ///< its closure has a srcref (its lines can be known)
    uint64_t next = 0;        ///< the context below it (its nextcontext)
  };
  /// Reads context `ctx`; all false and 0 when it cannot be read.
  ContextInfo context_info(InterpMemory& mem, uint64_t ctx) const;

  // A closure call's return. R_execClosure (R's eval.c) stores what the call's body gave
  // (normally, or by return()) in its context's returnValue, then calls the exported
  // Rf_endcontext with that context as its first argument; a call left by a jump (an error,
  // a restart) sets it to NULL there or never gets there.
  /// The exported function that ends each context (its name in libR.so).
  static constexpr const char* kEndContext = "Rf_endcontext";
  /// Whether returnValue can be read here: RCNTXT's 4.0-4.3 layout (a SEXP after srcref and
  /// browserfinish, docs/interpreter-frames.md §2.2, validated on R 4.2.2). R 4.4+ keeps an
  /// R_bcstack_t there (an unboxed number or a SEXP), not read here.
  bool return_values_known(InterpMemory& mem) const;
  /// What the closure call of context `ctx` returned, read as Rf_endcontext starts for it,
  /// as the Variables view shows a value; nullopt when its returnValue is not set (the call
  /// is left by a jump) or cannot be read (return_values_known false).
  std::optional<std::string> returned_value(InterpMemory& mem, uint64_t ctx) const;
  /// The environment of the call of context `ctx` (its cloenv): with the context's address
  /// (the C stack of R_execClosure), what tells a call from a later one at the same address.
  /// Throws InterpReadError when it cannot be read.
  uint64_t call_environment(InterpMemory& mem, uint64_t ctx) const;

  // A local's binding, for following its changes (r_bindings.cpp). A closure call's
  // environment holds its locals in its frame, a pairlist of cells: each cell's TAG is the
  // symbol, its CAR the value (or, for an unboxed number the byte-code interpreter stores,
  // the number itself; the cell's header says which). An assignment to a bound local writes
  // the CAR; a new local is a new cell put at the frame's head (R's envir.c, defineVar).
  /// Where a local is bound in one call.
  struct LocalBinding {
    uint64_t env = 0;   ///< the call's environment (its context's cloenv)
    uint64_t cell = 0;  ///< the binding cell in that environment's frame
  };
  /// Local `name` of the closure call of context `ctx`, at this point. Throws Error when it
  /// is not bound in that call's own environment (a global, a name not assigned yet, or an
  /// environment kept in a hash table), InterpReadError when the call cannot be read. With
  /// `unbound_too`, a name not bound yet gives cell 0 instead.
  LocalBinding local_binding(InterpMemory& mem, uint64_t ctx, const std::string& name,
                             bool unbound_too = false) const;
  /// Whether binding cell `cell`'s symbol is `name` (false while it has none, or when it
  /// cannot be read).
  bool binding_named(InterpMemory& mem, uint64_t cell, const std::string& name) const;
  /// The word of binding cell `cell` that an assignment writes (its CAR), 8 bytes.
  static uint64_t binding_value_word(uint64_t cell);
  /// The word of environment `env` that points at its first binding (its FRAME), written as a
  /// new local is bound; 8 bytes.
  static uint64_t env_frame_word(uint64_t env);
  /// The word of context `ctx` that holds its call's environment (cloenv), written by every
  /// context that starts at that address (Rf_begincontext); 8 bytes.
  static uint64_t context_env_word(uint64_t ctx);
  /// Whether `cell` is one of the bindings of environment `env`'s frame now (at most
  /// 100,000 looked at), its symbol set (defineVar links a new cell, then tags it); false
  /// when either cannot be read.
  bool binds(InterpMemory& mem, uint64_t env, uint64_t cell) const;
  /// Whether the closure call of context `ctx`, with environment `env`, runs now: a
  /// function context at `ctx` with that cloenv is in R_GlobalContext's chain. False when
  /// the chain cannot be read.
  bool call_running(InterpMemory& mem, uint64_t ctx, uint64_t env) const;
  /// The value of binding cell `cell` as the Variables view shows it (a read error in the
  /// text).
  std::string binding_value(InterpMemory& mem, uint64_t cell) const;
  /// The elements of a vector (what `x[i] <- v` and a `for` loop's variable change in place,
  /// without a new binding).
  struct VectorBytes {
    uint64_t addr = 0;  ///< the first element's address
    uint32_t len = 0;   ///< bytes; 0: none
  };
  /// The elements of the vector bound in cell `cell`: a logical, integer, double, complex,
  /// character or list vector that is no ALTREP, its elements 1 to `max_bytes` bytes. None
  /// (len 0) for any other value, an unboxed number (kept in the cell itself) or a cell that
  /// cannot be read.
  VectorBytes bound_vector(InterpMemory& mem, uint64_t cell, uint32_t max_bytes) const;

  // Code, for breakpoints (r_code.cpp).
  /// Which files' code to read (the others are skipped after their first srcref).
  using FileFilter = std::function<bool(const std::string&)>;
  /// The code of closure `closure` (its AST body's statements, or its byte code); nullopt
  /// when it is no closure, has no srcrefs (base R, keep.source off) or its file is not
  /// `wanted`. Reads at most 200,000 nodes of an AST body.
  std::optional<RCode> closure_code(InterpMemory& mem, uint64_t closure,
                                    const FileFilter& wanted) const;
  /// The code of byte-code object `body`; nullopt when it is none, has no srcrefs or its
  /// file is not `wanted`.
  std::optional<RCode> bytecode(InterpMemory& mem, uint64_t body, const FileFilter& wanted) const;
  /// A closure with the name it was found under: its call's function symbol (a running
  /// one; "" when called through an expression, as `(function(x) x)(1)`) or the symbol it
  /// is bound to (the global environment).
  struct NamedClosure {
    uint64_t closure = 0;
    std::string name;
  };
  /// The closures a breakpoint may bind in here: those running (every function context's)
  /// and those bound in the global environment (where source() defines a script's
  /// functions). At most `limit`.
  std::vector<NamedClosure> closures(InterpMemory& mem, size_t limit) const;
  /// The closure the innermost function context runs, with its call's name; nullopt when no
  /// function runs.
  std::optional<NamedClosure> running_closure(InterpMemory& mem) const;
  /// The line of closure `closure`'s `function` keyword (its srcref); 0 when it has none.
  int closure_line(InterpMemory& mem, uint64_t closure) const;
  /// The body of closure `closure` (an AST, or a byte-code object once compiled).
  uint64_t closure_body(InterpMemory& mem, uint64_t closure) const;
  /// The address of closure `closure`'s body pointer: the JIT writes it as it replaces the
  /// AST body with byte code (applyClosure in R's eval.c).
  static uint64_t closure_body_word(uint64_t closure);
  /// The file srcref `srcref` points into; "" when it is no srcref or names no file.
  std::string srcref_file(InterpMemory& mem, uint64_t srcref) const;
  /// The first line of srcref `srcref`; 0 when it is none.
  int srcref_line(InterpMemory& mem, uint64_t srcref) const;
  /// What R parses, at a stop where its parser starts (Rf_yyparse): nullopt when it parses
  /// at the top level (the REPL, R -e, R -f: no function runs); else the file named by the
  /// innermost function with a `srcfile` local (parse() has one: source() and sys.source()
  /// pass theirs), "" when that local names no file (parse(text = ...): NULL) or no function
  /// has one.
  std::optional<std::string> parse_source(InterpMemory& mem) const;
  /// Whether an instruction ending at `rip` may be `{`'s read of a statement's srcref as
  /// the statement starts (r_block_code_ranges; do_begin found through R's exported builtin
  /// table R_FunTab). True when that code is not known.
  bool may_start_statement(uint64_t rip) const {
    if (g_.block_reads.empty()) return true;
    for (auto [lo, hi] : g_.block_reads)
      if (rip > lo && rip <= hi) return true;
    return false;
  }
  /// The byte code the R frame with context `frame` (InterpFrame::address) runs, named
  /// `function`, disassembled, with the instruction it is at (r_disassembly.cpp); only a
  /// `note` for a function the AST evaluator runs. Throws InterpReadError when the frame
  /// cannot be read (gone, or memory in the middle of an update), Error when R's opcode
  /// table is not found.
  InterpCode frame_code(InterpMemory& mem, uint64_t frame, const std::string& function) const;
  /// The byte code the innermost bcEval runs (R_BCbody); 0 when unknown.
  uint64_t running_bytecode(InterpMemory& mem) const { return g_.bcbody ? mem.u64(g_.bcbody) : 0; }

 private:
  struct Globals {
    uint64_t global_context = 0;                              ///< &R_GlobalContext
    uint64_t nil = 0, unbound = 0, in_bc = 0, na_string = 0;  ///< their values
    uint64_t srcref = 0;                                      ///< &R_Srcref
    uint64_t global_env = 0;                                  ///< &R_GlobalEnv
    std::vector<std::pair<uint64_t, uint64_t>> block_reads;   ///< r_block_code_ranges()
    uint64_t bcpc = 0, bcbody = 0;  ///< &R_BCpc, &R_BCbody (hidden: r_bytecode_globals.h)
    uint64_t opcodes = 0;           ///< R's opcode table (find_r_opcode_table)
    int srcref_field = 0;           ///< RCNTXT's srcref offset where Rf_begincontext saves it
  };
  explicit RReader(Globals g) : g_(g) {}
  std::vector<InterpFrame> walk(InterpMemory& mem, int srcref_offset, bool& valid,
                                size_t with_locals = SIZE_MAX) const;
  /// RCNTXT's srcref offset: 368 (R 4.0-4.3) or 384 (4.4+).
  int srcref_field(InterpMemory& mem) const;
  /// The innermost function context (R's frame identity, InterpFrame::address); 0 at the
  /// top level.
  uint64_t innermost_context(InterpMemory& mem) const;
  Globals g_;
  /// The address of R's `srcfile` symbol, once a binding showed it (parse_source).
  mutable uint64_t srcfile_sym_ = 0;
};

}  // namespace rwd
