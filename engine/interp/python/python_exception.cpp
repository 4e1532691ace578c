#include "engine/interp/python/python_exception.h"

#include "engine/interp/python/python_objects.h"

namespace rwd {

namespace {

constexpr int kMaxTraceback = 10000;  // entries followed (a deep recursion has ~1,000)
constexpr int kMaxHandled = 1000;     // handled exceptions followed (one per nested handler)

/// The type name without its module ("helper.Invalid" -> "Invalid": builtin types have none).
std::string short_name(const std::string& tp_name) {
  size_t dot = tp_name.rfind('.');
  return dot == std::string::npos ? tp_name : tp_name.substr(dot + 1);
}

/// str() of one argument: a str's text, anything else's repr.
std::string str_of(InterpMemory& m, const PythonLayout& l, uint64_t obj) {
  uint64_t type = m.u64(obj + py::kObType);
  if (m.u64(type + py::kTpFlags) & py::kUnicodeSubclass) return python_str(m, l, obj, 500);
  std::string ignored;
  return python_repr(m, l, obj, ignored);
}

/// The message of an exception whose only argument is `arg` (BaseException_str in
/// Objects/exceptions.c: str() of it; KeyError_str: its repr).
std::string message_of_arg(InterpMemory& m, const PythonLayout& l, uint64_t arg,
                           const std::string& type) {
  if (type == "KeyError") {
    std::string ignored;
    return python_repr(m, l, arg, ignored);
  }
  return str_of(m, l, arg);
}

/// The message of an exception whose arguments are the tuple `args`: "" for none, the only
/// one's, or the tuple's repr.
std::string message_of_args(InterpMemory& m, const PythonLayout& l, uint64_t args,
                            const std::string& type) {
  if (!args) return "";
  int64_t n = m.i64(args + py::kObSize);
  if (n <= 0) return "";
  if (n == 1) return message_of_arg(m, l, m.u64(args + uint64_t(l.tuple_items)), type);
  std::string ignored;
  return python_repr(m, l, args, ignored);
}

/// The words of the exception set on thread state `tstate`, whichever way the version keeps
/// them: 3.11's type, value and traceback; from 3.12 the exception object (as `value`) and
/// its traceback. All 0 when none is set.
struct CurrentWords {
  uint64_t type = 0, value = 0, traceback = 0;
};
CurrentWords current_words(InterpMemory& m, const PythonLayout& l, uint64_t tstate) {
  CurrentWords w;
  if (l.tstate_current_exception >= 0) {
    w.value = m.u64(tstate + uint64_t(l.tstate_current_exception));
    if (w.value) w.traceback = m.u64(w.value + py::kExcTraceback);
  } else {
    w.type = m.u64(tstate + uint64_t(l.tstate_curexc_type));
    w.value = m.u64(tstate + uint64_t(l.tstate_curexc_value));
    w.traceback = m.u64(tstate + uint64_t(l.tstate_curexc_traceback));
  }
  return w;
}

/// The type object of an exception given as type `type` and value `value` (an instance's own
/// type wins); its value's tp_flags in `value_flags` (0 without a value).
uint64_t exception_type_object(InterpMemory& m, uint64_t type, uint64_t value,
                               uint64_t& value_flags) {
  uint64_t value_type = value ? m.u64(value + py::kObType) : 0;
  value_flags = value_type ? m.u64(value_type + py::kTpFlags) : 0;
  return value_flags & py::kBaseExcSubclass ? value_type : type;
}

}  // namespace

PythonException python_exception(InterpMemory& m, const PythonLayout& l, uint64_t type,
                                 uint64_t value, uint64_t tb) {
  PythonException e;
  e.value = value;
  e.traceback = tb;
  uint64_t flags = 0;
  type = exception_type_object(m, type, value, flags);
  bool instance = flags & py::kBaseExcSubclass;
  if (!type) throw InterpReadError("an exception without a type");
  e.type = short_name(python_type_object_name(m, type));
  if (instance)
    e.message = message_of_args(m, l, m.u64(value + py::kExcArgs), e.type);
  else if (flags & py::kTupleSubclass)
    e.message = message_of_args(m, l, value, e.type);
  else if (value)
    e.message = message_of_arg(m, l, value, e.type);
  return e;
}

std::optional<PythonException> python_current_exception(InterpMemory& m, const PythonLayout& l,
                                                        uint64_t tstate) {
  CurrentWords w = current_words(m, l, tstate);
  if (!w.type && !w.value) return std::nullopt;
  return python_exception(m, l, w.type, w.value, w.traceback);
}

uint64_t python_current_traceback(InterpMemory& m, const PythonLayout& l, uint64_t tstate) {
  return current_words(m, l, tstate).traceback;
}

std::string python_current_exception_type(InterpMemory& m, const PythonLayout& l, uint64_t tstate) {
  CurrentWords w = current_words(m, l, tstate);
  uint64_t flags = 0;
  uint64_t type = exception_type_object(m, w.type, w.value, flags);
  return type ? short_name(python_type_object_name(m, type)) : "";
}

std::vector<PythonException> python_handled_exceptions(InterpMemory& m, const PythonLayout& l,
                                                       uint64_t tstate) {
  std::vector<PythonException> out;
  uint64_t item = m.u64(tstate + uint64_t(l.tstate_exc_info));
  for (int n = 0; item && n < kMaxHandled; ++n, item = m.u64(item + py::kStackItemPrevious)) {
    uint64_t exc = m.u64(item + py::kStackItemExcValue);
    if (exc && python_type_name(m, exc) != "NoneType")
      out.push_back(python_exception(m, l, 0, exc, m.u64(exc + py::kExcTraceback)));
  }
  return out;
}

PythonTracebackEntry python_traceback_innermost(InterpMemory& m, uint64_t tb) {
  for (int n = 0; n < kMaxTraceback; ++n) {
    uint64_t next = m.u64(tb + py::kTbNext);
    if (!next) {
      PythonTracebackEntry e;
      e.frame_object = m.u64(tb + py::kTbFrame);
      e.lasti = int32_t(m.u32(tb + py::kTbLasti));
      return e;
    }
    tb = next;
  }
  throw InterpReadError("a traceback longer than " + std::to_string(kMaxTraceback) + " entries");
}

}  // namespace rwd
