// A program that holds one variable of each CPython structure the frame reader walks, built
// with -g against one CPython version's own headers (internal ones included): its DWARF gives
// the offsets python_layout_test compares with engine/interp/python/python_layout.cpp.
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <opcode.h>
_PyRuntimeState probe_runtime;
PyInterpreterState probe_interp;
PyThreadState probe_tstate;
#if PY_MINOR_VERSION < 13
_PyCFrame probe_cframe;
#endif
_PyInterpreterFrame probe_frame;
PyCodeObject probe_code;
PyASCIIObject probe_ascii;
PyCompactUnicodeObject probe_compact;
PyTypeObject probe_type;
PyBytesObject probe_bytes;
PyTupleObject probe_tuple;
PyListObject probe_list;
PyLongObject probe_long;
PyFloatObject probe_float;
PyDictObject probe_dict;
PyCellObject probe_cell;
PyFunctionObject probe_function;
PyVarObject probe_var;
PyBaseExceptionObject probe_exception;
PyTracebackObject probe_traceback;
PyFrameObject probe_frame_object;
/// The opcodes the reader looks for, as enumerators (their values are in the DWARF).
typedef enum {
  probe_op_raise_varargs = RAISE_VARARGS,
  probe_op_return_value = RETURN_VALUE,
  probe_op_yield_value = YIELD_VALUE,
  probe_op_extended_arg = EXTENDED_ARG
} probe_opcodes;
probe_opcodes probe_opcode;
/// The lowest owner value of a frame that runs no Python function (3.12+).
#if PY_MINOR_VERSION >= 14
typedef enum { probe_first_shim_owner = FRAME_OWNED_BY_INTERPRETER } probe_owners;
probe_owners probe_owner;
#elif PY_MINOR_VERSION >= 12
typedef enum { probe_first_shim_owner = FRAME_OWNED_BY_CSTACK } probe_owners;
probe_owners probe_owner;
#endif
/// A _PyStackRef's tag bits (3.14+).
#if PY_MINOR_VERSION >= 14
#include <internal/pycore_stackref.h>
typedef enum { probe_tag_bits = Py_TAG_BITS } probe_tags;
probe_tags probe_tag;
#endif
int main(void) {
  return 0;
}
