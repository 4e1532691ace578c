// Python exceptions read out of a stopped CPython 3.11-3.14: the one a thread is raising or
// propagating (its thread state's curexc_* fields in 3.11, current_exception from 3.12,
// Include/cpython/pystate.h), its type and message as the traceback's last line shows them,
// and where its traceback says it was raised (Include/cpython/traceback.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/interp/interp_frame.h"
#include "engine/interp/python/python_layout.h"

namespace rwd {

/// An exception as a debugger shows it.
struct PythonException {
  /// The exception object; in 3.11 before normalization, the raw value (a str, a tuple, or
  /// 0) that the exception will be made from.
  uint64_t value = 0;
  uint64_t traceback = 0;  ///< its traceback object; 0 while no Python frame has seen it
  std::string type;        ///< the type's name ("ValueError", "helper.Invalid" has "Invalid")
  std::string message;     ///< what str(exception) gives, for the common cases (see below)
};

/// The exception of type object `type` with value `value` and traceback `tb` (0: none).
/// `value` may be an exception instance (its type is then the instance's), a str, a tuple of
/// arguments, or 0 (3.11's unnormalized forms). The message is str() of the only argument
/// (repr() for KeyError, as BaseException and KeyError's __str__ do), the repr of the
/// argument tuple when there are several, and "" when there are none. Throws InterpReadError.
PythonException python_exception(InterpMemory& m, const PythonLayout& l, uint64_t type,
                                 uint64_t value, uint64_t tb);

/// The exception set on thread state `tstate` (being raised, or propagating out of frames
/// towards a handler); nullopt when none is. Throws InterpReadError.
std::optional<PythonException> python_current_exception(InterpMemory& m, const PythonLayout& l,
                                                        uint64_t tstate);

/// The traceback of the exception set on thread state `tstate` (python_current_exception's),
/// 0 when none is set or it has none yet. Throws InterpReadError.
uint64_t python_current_traceback(InterpMemory& m, const PythonLayout& l, uint64_t tstate);

/// The type name (as PythonException::type) of the exception set on thread state `tstate`,
/// "" when none is: fewer reads than python_current_exception. Throws InterpReadError.
std::string python_current_exception_type(InterpMemory& m, const PythonLayout& l, uint64_t tstate);

/// The exceptions thread state `tstate` is handling, innermost first (sys.exc_info() and the
/// ones it replaced: an except or finally clause, also one an exception propagates through,
/// inside another); empty when none is. Throws InterpReadError.
std::vector<PythonException> python_handled_exceptions(InterpMemory& m, const PythonLayout& l,
                                                       uint64_t tstate);

/// The innermost entry of a traceback: the frame the exception was raised in.
struct PythonTracebackEntry {
  uint64_t frame_object = 0;  ///< a PyFrameObject
  int lasti = 0;              ///< the raising instruction, in bytes from the bytecode's start
};

/// The innermost (last) entry of traceback `tb` (at most 10,000 entries are followed).
/// Throws InterpReadError.
PythonTracebackEntry python_traceback_innermost(InterpMemory& m, uint64_t tb);

/// The _PyInterpreterFrame a PyFrameObject `frame_object` stands for. Throws InterpReadError.
inline uint64_t python_frame_of_object(InterpMemory& m, uint64_t frame_object) {
  return m.u64(frame_object + py::kFrameObjectFrame);
}

}  // namespace rwd
