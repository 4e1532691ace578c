// Struct offsets of CPython 3.11 to 3.14 on x86-64 Linux, by minor version: the data the
// Python frame reader walks with. Values from docs/interpreter-frames.md §1.3, computed with
// offsetof against each version's own headers (3.13's and 3.14's are checked against what the
// interpreter's _Py_DebugOffsets report before they are used: python_debug_offsets.h).
// tests/interp/python_layout_test reads every one back from the DWARF of a program built
// against each installed version's headers.
#pragma once

#include <cstdint>

namespace rwd {

/// Byte offsets into CPython's runtime structures (-1: the field does not exist in that
/// version).
struct PythonLayout {
  int minor;                      ///< 3.minor
  int runtime_interpreters_head;  ///< _PyRuntimeState.interpreters.head
  int interp_threads_head;        ///< PyInterpreterState.threads.head
  int interp_gc_generations;      ///< PyInterpreterState.gc.generations (kGcGenerations of them)
  int interp_gc_permanent;        ///< PyInterpreterState.gc.permanent_generation
  int tstate_next;                ///< PyThreadState.next
  int tstate_cframe;              ///< PyThreadState.cframe (3.11, 3.12)
  int cframe_current_frame;       ///< _PyCFrame.current_frame (3.11, 3.12)
  int tstate_current_frame;       ///< PyThreadState.current_frame (3.13)
  int tstate_native_thread_id;    ///< PyThreadState.native_thread_id (the Linux tid)
  int tstate_curexc_type;         ///< PyThreadState.curexc_type (3.11; value and traceback follow)
  int tstate_curexc_value;        ///< PyThreadState.curexc_value (3.11)
  int tstate_curexc_traceback;    ///< PyThreadState.curexc_traceback (3.11)
  int tstate_current_exception;   ///< PyThreadState.current_exception (3.12+)
  int tstate_exc_info;            ///< PyThreadState.exc_info: the exception being handled
  int frame_code;                 ///< _PyInterpreterFrame.f_code / f_executable
  int frame_previous;
  int frame_instr;     ///< prev_instr (3.11, 3.12) / instr_ptr (3.13)
  int frame_is_entry;  ///< is_entry (3.11)
  int frame_owner;
  int frame_localsplus;
  /// The lowest owner value of frames that run no Python function, which the stack skips
  /// (3.12, 3.13: FRAME_OWNED_BY_CSTACK, the shim of a C call into the eval loop; 3.14 adds
  /// FRAME_OWNED_BY_INTERPRETER below it); -1 before 3.12.
  int shim_owner_from;
  /// The tag bits of a _PyStackRef (3.14+: f_executable and localsplus hold them; the GIL
  /// build's Py_TAG_BITS, pycore_stackref.h): 0 where those words are plain PyObject*.
  uint64_t stackref_tag_bits;
  int function_code;  ///< PyFunctionObject.func_code
  int code_consts;    ///< co_consts: tuple (nested code objects among them)
  int code_argcount;
  int code_firstlineno;
  int code_nlocalsplus;
  int code_localsplusnames;  ///< tuple of str
  int code_localspluskinds;  ///< bytes
  int code_filename;
  int code_qualname;
  int code_linetable;      ///< bytes
  int code_code_adaptive;  ///< the bytecode, inline in the code object
  int tuple_items;         ///< PyTupleObject.ob_item (3.14 caches the hash before it)
  int ascii_data;          ///< sizeof(PyASCIIObject): compact ASCII str data
  int compact_data;        ///< sizeof(PyCompactUnicodeObject): compact non-ASCII data
  bool long_tag;           ///< int size in lv_tag (3.12+) rather than ob_size
  int op_raise_varargs;    ///< the RAISE_VARARGS opcode (a `raise` statement; Include/opcode.h)
  /// The opcodes a frame is left by a return (Include/opcode.h; dis.opmap): RETURN_VALUE,
  /// RETURN_CONST (3.12+, -1 before) and their INSTRUMENTED_ forms (sys.monitoring, 3.12+),
  /// and by a yield: YIELD_VALUE and INSTRUMENTED_YIELD_VALUE; EXTENDED_ARG, which widens
  /// the next instruction's argument.
  int op_return_value, op_return_const, op_instrumented_return_value, op_instrumented_return_const,
      op_yield_value, op_instrumented_yield_value, op_extended_arg;
};

/// The layout of CPython 3.`minor`, or nullptr for a version rewind does not know.
const PythonLayout* python_layout(int minor);

/// The object a frame word of layout `l` refers to (f_executable, a localsplus entry): the
/// word itself before 3.14; from 3.14 a _PyStackRef, whose tag bits are masked off, 0 for
/// the NULL reference (bits Py_TAG_REFCNT alone) and for a tagged int (both tag bits set:
/// no object). pycore_stackref.h.
inline uint64_t stackref_object(const PythonLayout& l, uint64_t word) {
  if (!l.stackref_tag_bits) return word;
  if ((word & l.stackref_tag_bits) == l.stackref_tag_bits) return 0;
  return word & ~l.stackref_tag_bits;
}

/// Offsets shared by all supported versions (object headers, containers).
namespace py {
constexpr int kObType = 8, kObSize = 16;          // PyObject.ob_type, PyVarObject.ob_size
constexpr int kTpName = 24, kTpFlags = 168;       // PyTypeObject
constexpr int kStrLength = 16, kStrState = 32;    // PyASCIIObject
constexpr int kBytesData = 32;                    // PyBytesObject.ob_sval
constexpr int kListItems = 24;                    // PyListObject.ob_item
constexpr int kLongDigits = 24;                   // ob_digit (30-bit digits in uint32)
constexpr int kFloatValue = 16;                   // PyFloatObject.ob_fval
constexpr int kDictUsed = 16;                     // PyDictObject.ma_used
constexpr int kCellRef = 16;                      // PyCellObject.ob_ref
constexpr int kExcArgs = 24, kExcTraceback = 40;  // PyBaseExceptionObject.args, .traceback
constexpr int kStackItemExcValue = 0, kStackItemPrevious = 8;  // _PyErr_StackItem
// PyTracebackObject: tb_next, tb_frame (a PyFrameObject), tb_lasti (bytes), tb_lineno.
constexpr int kTbNext = 16, kTbFrame = 24, kTbLasti = 32, kTbLineno = 36;
constexpr int kFrameObjectFrame = 24;  // PyFrameObject.f_frame: its _PyInterpreterFrame
// The collector's lists (Include/internal/pycore_gc.h): each generation is a list head
// (PyGC_Head: _gc_next, _gc_prev) and two ints; each tracked object follows its PyGC_Head.
constexpr int kGcGenerations = 3, kGcGenerationSize = 24, kGcHeadSize = 16;
// tp_flags bits (Include/object.h).
constexpr uint64_t kLongSubclass = 1ull << 24, kListSubclass = 1ull << 25,
                   kTupleSubclass = 1ull << 26, kBytesSubclass = 1ull << 27,
                   kUnicodeSubclass = 1ull << 28, kDictSubclass = 1ull << 29,
                   kBaseExcSubclass = 1ull << 30;
// co_localspluskinds (Include/internal/pycore_code.h).
constexpr uint8_t kFastHidden = 0x10, kFastLocal = 0x20, kFastCell = 0x40, kFastFree = 0x80;
}  // namespace py

}  // namespace rwd
