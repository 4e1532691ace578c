// The Python stack of a stopped CPython 3.11-3.14 interpreter, read from its memory with no
// help from it (docs/interpreter-frames.md §1): _PyRuntime -> interpreter ->
// thread states (by native_thread_id) -> _PyInterpreterFrame chain, each frame's code object
// giving function, file, line (co_linetable) and locals (localsplus).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "engine/interp/interp_frame.h"
#include "engine/interp/python/python_layout.h"
#include "engine/symbols/function_parts.h"
#include "engine/symbols/module_list.h"

namespace rwd {

/// A CPython interpreter found in a process.
class PythonReader {
 public:
  /// Looks for CPython in the process's modules (the _PyRuntime and Py_Version symbols, in
  /// the executable or libpython). nullopt when the process is not CPython (or has not
  /// loaded it yet, or not mapped its data: Py_Version unreadable). Throws Error naming the
  /// version when it is a CPython rewind cannot read (before 3.11, or after 3.14), or the
  /// field that differs when its _Py_DebugOffsets disagree with rewind's table (3.13 on:
  /// check_python_debug_offsets, python_debug_offsets.h).
  static std::optional<PythonReader> find(const ModuleList& modules, InterpMemory& mem);

  /// "3.11.2".
  std::string version() const;
  /// The Python frames of the thread running on task `tid`, innermost first; empty when the
  /// task runs no Python code (or the interpreter is not initialized yet). A frame that
  /// cannot be read (the process stopped in the middle of an update) comes back with its
  /// `error` set, and the walk stops there.
  /// Only as deep as `depth` says.
  std::vector<InterpFrame> stack(InterpMemory& mem, pid_t tid, StackDepth depth = {}) const;
  /// The address of the 8-byte word that holds the current frame of the thread running on
  /// task `tid` (3.11/3.12: its _PyCFrame's current_frame, 3.13: the thread state's
  /// current_frame): written at each Python-to-Python call and return made in the eval loop.
  /// 0 when the task runs no Python code. Throws InterpReadError.
  uint64_t current_frame_word(InterpMemory& mem, pid_t tid) const;
  /// The frame that word holds (pushed, maybe not started), 0 when the task runs no Python
  /// code. Throws InterpReadError.
  uint64_t current_frame(InterpMemory& mem, pid_t tid) const {
    uint64_t word = current_frame_word(mem, tid);
    return word ? mem.u64(word) : 0;
  }
  /// The word of frame `frame` written at each of its bytecode instructions
  /// (InterpFrame::step_word).
  uint64_t step_word(uint64_t frame) const { return frame + uint64_t(layout_->frame_instr); }
  /// The code object frame `frame` runs. Throws InterpReadError.
  uint64_t frame_code(InterpMemory& mem, uint64_t frame) const {
    return stackref_object(*layout_, mem.u64(frame + uint64_t(layout_->frame_code)));
  }
  /// The address of local `name`'s slot in frame `frame`: its localsplus entry, which holds
  /// the bound object (a PyObject*) or NULL while unbound; STORE_FAST and a call's binding
  /// of the arguments write it. Throws Error when the frame's code has no local of that
  /// name, or when it is a cell or free variable (shared with a nested function: the slot
  /// holds the cell, not the value); InterpReadError when the frame cannot be read.
  uint64_t local_slot(InterpMemory& mem, uint64_t frame, const std::string& name) const;
  /// Whether frame `frame` is on the Python stack of the thread running on task `tid`.
  /// Throws InterpReadError.
  bool on_stack(InterpMemory& mem, pid_t tid, uint64_t frame) const;
  /// Whether frame `frame` runs on task `tid`'s thread, or is being set up for a call from
  /// the frame running there (pushed but not entered yet, its arguments being bound: its
  /// instruction pointer before its code, or its `previous` the current frame). Throws
  /// InterpReadError.
  bool running_or_entering(InterpMemory& mem, pid_t tid, uint64_t frame) const;
  /// How a frame is being left, and what it returned.
  struct FrameExit {
    enum Kind { Returned, Yielded, Raised } kind = Raised;
    uint64_t object = 0;  ///< the object returned (Returned)
  };
  /// How frame `frame` is being left, read when its thread's current frame word is written
  /// with its caller (3.12+ unlink the frame before clearing it; 3.11 clears it first, which
  /// leaves its value stack's slots alone), from the instruction it stands at: Returned by
  /// RETURN_VALUE (the object is the first slot of its value stack: ceval asserts the stack
  /// is empty after popping the result) or RETURN_CONST (its constant, co_consts[oparg]),
  /// Yielded by YIELD_VALUE, Raised by any other (an exception unwinds it). Throws
  /// InterpReadError.
  FrameExit frame_exit(InterpMemory& mem, uint64_t frame) const;
  /// Frame `frame`'s function, file and line, without its locals. Throws InterpReadError.
  InterpFrame frame_summary(InterpMemory& mem, uint64_t frame) const {
    return read_frame(mem, frame, false);
  }
  /// The thread state (PyThreadState) of the thread running on task `tid` (its native
  /// thread id), or 0 when it has none. Throws InterpReadError.
  uint64_t thread_state(InterpMemory& mem, pid_t tid) const;
  /// This version's struct offsets.
  const PythonLayout& layout() const { return *layout_; }
  /// The code objects of the function objects the interpreter's collector tracks (its
  /// generations' lists and the permanent one: every function defined and still alive), at
  /// most `max`, in list order (python_gc.cpp). Throws InterpReadError.
  std::vector<uint64_t> function_codes(InterpMemory& mem, size_t max) const;
  /// Whether code address `pc` is in the eval loop, _PyEval_EvalFrameDefault, with the parts
  /// its compiler split off (function_parts.h): where a Python frame's native call runs.
  bool in_eval_loop(uint64_t pc) const { return in_ranges(eval_loop_, pc); }

 private:
  PythonReader(const PythonLayout& l, uint64_t runtime, uint32_t version, uint64_t function_type,
               CodeRanges eval_loop)
      : layout_(&l),
        runtime_(runtime),
        version_(version),
        function_type_(function_type),
        eval_loop_(std::move(eval_loop)) {}
  /// Frame `frame` as stack() shows it; its locals only `with_locals`.
  InterpFrame read_frame(InterpMemory& mem, uint64_t frame, bool with_locals = true) const;
  /// The first thread state, or 0 before the interpreter exists.
  uint64_t first_thread(InterpMemory& mem) const;
  /// The word holding thread state `tstate`'s current frame (current_frame_word), or 0.
  /// Throws InterpReadError.
  uint64_t frame_word(InterpMemory& mem, uint64_t tstate) const;

  const PythonLayout* layout_;
  uint64_t runtime_;        ///< runtime address of _PyRuntime
  uint32_t version_;        ///< PY_VERSION_HEX
  uint64_t function_type_;  ///< runtime address of PyFunction_Type (0: not found)
  CodeRanges eval_loop_;    ///< the eval loop's code
};

}  // namespace rwd
