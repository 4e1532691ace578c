// Breakpoints on lines of R source files (DAP setBreakpoints for a .R file) and on R
// functions by name (setFunctionBreakpoints) in a replayed GNU R 4.x, forwards and
// backwards, for AST-interpreted and byte-compiled functions, with no help from R.
//
// A line is bound where its statements start in every function of that file rewind has
// seen (r_code.h); a function, at the first statement of its body in every function of
// that name rewind has seen (named by the symbol it is bound to in the global environment,
// or by the call that runs it). Three debug registers are the debugger's. Forwards, three
// watchpoints see every start:
// - R_Srcref (write): the AST evaluator sets it to a statement's own srcref object as the
//   statement starts; a hit is a write of a bound statement's srcref that RReader's
//   starts_statement() accepts (not a restore as a call, a loop or a bcEval ends).
// - R_BCpc (write): set as each bcEval starts and ends, and as an error or return unwinds
//   into one. Only the innermost bcEval runs instructions, so between two of these writes
//   only its byte code can reach a bound line: the third watchpoint is armed for it alone.
// - For that byte code: a read watchpoint on the instruction word where the bound line
//   starts (bcEval fetches it to run it), or, when the code holds several bound lines, a
//   write watchpoint on the frame's `currentpc` (written at each instruction).
// Until some bound code exists, nothing is watched: a breakpoint on R's parser (Rf_yyparse)
// turns the watchpoints on once R parses a file with breakpoints, or any file while a
// function breakpoint is unbound (R's own start, hundreds of thousands of calls, and the
// top-level code that sources the file, cost nothing). At a top-level parse (R -e, R -f,
// the REPL: one expression at a time) the functions defined so far are looked for instead:
// a function defined and called in one top-level expression is missed there.
// Once every breakpoint is bound, in at most three places that all have a word of their own
// (and, forwards, all exist at that point: checked at each stop while R's globals are
// watched), each place's own word is watched instead, in both directions ("sites": the
// statement's slot in its `{`'s srcref list, which do_begin reads through getSrcref; the
// instruction word): a read by do_begin's code is followed forwards to its R_Srcref write.
// A run then stops only where a bound line may start, not at every R call. Forwards, where
// slots are left, the body pointer of each AST closure with a bound place is watched too
// (the JIT replaces it with byte code, whose places are bound then), and the parser
// breakpoint stays: R parsing a file with breakpoints again brings back R's globals for the
// rest of the resume. Backwards, a word whose content differs from the resume's start (its
// code not made yet) is dropped. A hit stops just after the R_Srcref write or the fetch,
// where the R stack shows the line.
//
// Code is found when breakpoints are set and as a resume begins (the functions running and
// those in the global environment), at each bcEval start (the JIT compiles a function as it
// is first called), and at each statement start of a file with breakpoints (any file while
// a function breakpoint is unbound) whose srcref is not known yet (top-level code of a
// sourced file, bound as it runs forwards; the functions it defined).
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/arch/registers.h"
#include "engine/debugger/breakpoint_refs.h"
#include "engine/debugger/line_stepper.h"
#include "engine/debugger/source_breakpoints.h"
#include "engine/interp/r/r_frames.h"
#include "engine/symbols/module_list.h"

namespace rwd {

/// The R line breakpoints of one debugging session.
class RBreakpoints {
 public:
  /// `modules`: the debugger's modules at the current point (refreshed by it after moves).
  RBreakpoints(Timeline& timeline, ModuleList& modules, BreakpointRefs& refs)
      : tl_(timeline), modules_(modules), refs_(refs) {}
  ~RBreakpoints() { end_resume(); }
  RBreakpoints(const RBreakpoints&) = delete;
  RBreakpoints& operator=(const RBreakpoints&) = delete;

  /// Whether breakpoints in `path` are R line breakpoints (a .R or .r file).
  static bool is_r_source(const std::string& path);
  /// Whether `name` is a syntactic R name ("accumulate", "my.fun", ".hidden"; R Language
  /// Definition §10.3.2): letters, digits, '.' and '_', starting with a letter or with a '.'
  /// not followed by a digit, and not a reserved word (?Reserved).
  static bool is_r_name(const std::string& name);

  /// Removes the R breakpoints `replaced` selects and adds `bps` (ids and specs set;
  /// conditions in R, checked by check_script_condition): lines of a .R file, or functions
  /// by name (spec.function). Binds them in the code known here; returns them.
  std::vector<Breakpoint> replace(const std::function<bool(const Breakpoint&)>& replaced,
                                  std::vector<Breakpoint> bps);
  /// The breakpoint with id `id`, nullptr when it is not an R one.
  const Breakpoint* find(int id) const;
  /// Ids whose binding changed since the last call.
  std::vector<int> take_rebound() { return std::exchange(rebound_, {}); }
  /// Sets every hit count back to 0 (DAP restart).
  void reset_hit_counts() {
    for (auto& [id, bp] : bps_) bp.hits = 0;
  }

  /// A Debugger::resume in direction `dir` begins; end_resume() takes away what prepare()
  /// armed.
  void begin_resume(Direction dir);
  void end_resume();
  /// Before each run of the resume: arms the watchpoints once R is found and some
  /// breakpoint is bound, or once R parses code that may be theirs (a breakpoint on R's
  /// parser tells; forwards only).
  void prepare();
  /// Whether a forward run should pause where code is mapped: breakpoints are set, nothing
  /// is watched yet, and R's parser is not mapped here to wait on.
  bool waits_for_interpreter() const {
    return dir_ == Direction::Forward && !bps_.empty() && !live_ && !parser_;
  }
  /// Whether watchpoints are armed: a reverse run then stops after each write or fetch
  /// (Timeline::WatchStop::AfterWrite).
  bool watching() const { return !armed_.empty(); }

  /// Whether `s` is a stop at one of its watchpoints or at its parser breakpoint.
  bool owns(const StopInfo& s) const;
  /// Handles a stop owns() accepted, in a run going `dir`. With stop false, the run goes on.
  ScriptBreakpointOutcome on_stop(const StopInfo& s, Direction dir);

 private:
  /// The R interpreter of the current task's process, once initialized; nullptr before.
  const RReader* reader();
  /// Reads the code of `closure` (its body), or of byte code `body` (of `closure`, when
  /// not 0), into codes_ when its file has line breakpoints or a function breakpoint names
  /// `name` (the name `closure` was found under); returns its key in codes_, 0 when it has
  /// none.
  uint64_t learn(InterpMemory& mem, uint64_t closure, uint64_t body, const std::string& name);
  /// learn() for byte code `body` that a bcEval runs, with the closure the innermost
  /// function context runs when `body` is that closure's.
  uint64_t learn_bytecode(InterpMemory& mem, uint64_t body);
  /// Learns every closure running or in the global environment, and rebinds.
  void discover(InterpMemory& mem);
  /// Binds `bp` in codes_; returns whether its binding changed.
  bool bind(Breakpoint& bp);
  /// Adds place `at` (on `line`) of code `c` to `bp`'s binding.
  void bind_place(Breakpoint& bp, const RCode& c, uint64_t at, int line);
  void bind_all();
  /// Whether some line breakpoint wants code of `file`.
  bool wanted(const std::string& file) const;
  /// Whether some function breakpoint names `name`.
  bool names_function(const std::string& name) const;
  /// Whether some breakpoint is a function breakpoint.
  bool has_functions() const;
  /// Whether some function breakpoint is bound nowhere yet: code R parses anywhere may
  /// define its function.
  bool functions_pending() const;
  bool all_pending() const;
  /// Whether the code of some bound place exists at the current point (its word holds what
  /// it held when read): forwards from before that, nothing is watched until R parses.
  bool code_exists_here();
  /// With at most as many bound places as free debug registers and each with a word of its
  /// own: watches those words' reads instead of R's globals (a run then stops only where a
  /// bound line may start). Forwards only when every breakpoint is bound and every place's
  /// code exists here, with the body pointers of the AST closures holding them (their JIT
  /// compilation) where registers are left. Returns false, arming nothing, otherwise.
  bool arm_sites();
  /// The words arm_sites() would watch (their code existing here), nullopt when it cannot.
  std::optional<std::vector<uint64_t>> site_words();
  /// Takes away every watchpoint prepare() armed.
  void disarm();
  /// A forward stop at a watched closure body pointer: the JIT compiled `closure`; learns
  /// its byte code and binds there.
  void on_compiled(const StopInfo& s, uint64_t closure);
  /// From the evaluator's read `read` of statement `srcref`'s slot, forwards to where it
  /// sets R_Srcref to it; nullopt (the timeline moved on) when another write came first.
  std::optional<StopInfo> land_statement(const StopInfo& read, uint64_t srcref);
  /// At a stop where R's parser starts on task `tid`: goes live when R parses a file with
  /// line breakpoints or bound ones, or any file while a function breakpoint is unbound; at
  /// the top level, with function breakpoints, looks for the functions defined so far.
  /// Watching sites, goes back to R's globals when R parses such a file again.
  void on_parse(pid_t tid);
  /// Arms the third watchpoint for the byte code whose `currentpc` is at `pc_word` (its
  /// bound lines), or takes it away when that code has none.
  void arm_bytecode(InterpMemory& mem, uint64_t pc_word, uint64_t body);
  void disarm_bytecode();
  /// The hits of statement start or instruction `at` (a srcref or an instruction word),
  /// counted; fills `out`.
  void arrive(uint64_t at, InterpMemory& mem, ScriptBreakpointOutcome& out);
  /// Backwards: whether the timeline stands where this resume began (its first hit is the
  /// one that led there).
  bool at_start(pid_t tid);

  Timeline& tl_;
  ModuleList& modules_;
  BreakpointRefs& refs_;
  std::optional<RReader> reader_;
  std::map<int, Breakpoint> bps_;
  std::vector<int> rebound_;
  /// Known code: AST by its closure (top-level statements by their srcref), byte code by
  /// its first instruction word (code_begin).
  std::map<uint64_t, RCode> codes_;
  /// Closures, byte-code objects and srcrefs already looked at -> their key in codes_ (0:
  /// of no interest).
  std::unordered_map<uint64_t, uint64_t> seen_;
  /// Key in codes_ -> the names its function was found under that function breakpoints
  /// name.
  std::map<uint64_t, std::set<std::string>> code_names_;
  /// Key in codes_ -> the line of its function's `function` keyword (0: not known).
  std::map<uint64_t, int> header_line_;
  /// Bound place (a statement's srcref or an instruction word) -> its line.
  std::map<uint64_t, int> bound_;
  /// Bound place -> the word read as it starts: its srcref's slot in its `{`'s list (AST),
  /// its instruction word (byte code). Top-level statements have none.
  std::map<uint64_t, uint64_t> site_word_;
  /// A bound place's word -> what it holds once its code exists (the srcref; the threaded
  /// instruction address). A word holding anything else at a point is of code not made
  /// yet there.
  std::map<uint64_t, uint64_t> site_content_;
  // The resume in progress.
  Direction dir_ = Direction::Forward;
  std::vector<std::pair<uint64_t, WatchKind>> armed_;  ///< 8-byte watchpoints now armed
  uint64_t third_ = 0;                                 ///< the byte code's watched word
  WatchKind third_kind_ = WatchKind::Write;
  std::optional<CodeSite> parser_;  ///< Rf_yyparse's, while waiting for a parse
  uint64_t parser_at_ = 0;
  /// The watchpoints are on for the rest of the resume: some breakpoint is bound, or R
  /// parsed what may be a file with breakpoints.
  bool live_ = false;
  bool prepared_ = false;  ///< the watchpoints were armed for this resume
  bool sites_ = false;     ///< they watch bound places' own words (arm_sites)
  /// R's globals are watched for the rest of the resume: forwards, R parsed a file with
  /// breakpoints again while sites were watched (its new code is found as it runs), or the
  /// sites could not all be watched (no debug register left).
  bool globals_only_ = false;
  /// Counts changes of bound_; the watchpoints are armed again when it moves.
  uint64_t bound_version_ = 0, armed_version_ = 0;
  /// Forwards, sites: watched closure body pointers -> their closure.
  std::map<uint64_t, uint64_t> body_words_;
  /// Backwards: where the resume began (task, event, registers), until passed.
  std::optional<std::pair<StopInfo, Registers>> start_;
  /// Backwards: the read whose landing the run has just come back from, met again first.
  std::optional<std::pair<StopInfo, Registers>> skip_;
};

}  // namespace rwd
