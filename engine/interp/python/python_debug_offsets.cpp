// check_python_debug_offsets (python_debug_offsets.h).
#include "engine/interp/python/python_debug_offsets.h"

#include <cstring>
#include <string>

#include "engine/errors.h"

namespace rwd {

namespace {

/// One offset _Py_DebugOffsets publishes and rewind's table has: where the offset is stored
/// in _Py_DebugOffsets in 3.13 and in 3.14 (bytes from its start; offsetof against each
/// version's headers), and the value rewind expects (a PythonLayout member, or a constant
/// of python_layout.h shared by all versions).
struct Published {
  const char* name;  ///< _Py_DebugOffsets' name for it
  int at_13, at_14;
  int PythonLayout::*member;  ///< nullptr: `fixed`
  int fixed;
};

constexpr Published kPublished[] = {
    {"runtime_state.interpreters_head", 40, 40, &PythonLayout::runtime_interpreters_head, 0},
    {"interpreter_state.threads_head", 72, 72, &PythonLayout::interp_threads_head, 0},
    {"thread_state.next", 168, 192, &PythonLayout::tstate_next, 0},
    {"thread_state.current_frame", 184, 208, &PythonLayout::tstate_current_frame, 0},
    {"thread_state.native_thread_id", 200, 224, &PythonLayout::tstate_native_thread_id, 0},
    {"interpreter_frame.previous", 232, 256, &PythonLayout::frame_previous, 0},
    {"interpreter_frame.executable", 240, 264, &PythonLayout::frame_code, 0},
    {"interpreter_frame.instr_ptr", 248, 272, &PythonLayout::frame_instr, 0},
    {"interpreter_frame.localsplus", 256, 280, &PythonLayout::frame_localsplus, 0},
    {"interpreter_frame.owner", 264, 288, &PythonLayout::frame_owner, 0},
    {"code_object.filename", 280, 320, &PythonLayout::code_filename, 0},
    {"code_object.qualname", 296, 336, &PythonLayout::code_qualname, 0},
    {"code_object.linetable", 304, 344, &PythonLayout::code_linetable, 0},
    {"code_object.firstlineno", 312, 352, &PythonLayout::code_firstlineno, 0},
    {"code_object.argcount", 320, 360, &PythonLayout::code_argcount, 0},
    {"code_object.localsplusnames", 328, 368, &PythonLayout::code_localsplusnames, 0},
    {"code_object.localspluskinds", 336, 376, &PythonLayout::code_localspluskinds, 0},
    {"code_object.co_code_adaptive", 344, 384, &PythonLayout::code_code_adaptive, 0},
    {"pyobject.ob_type", 360, 408, nullptr, py::kObType},
    {"type_object.tp_name", 376, 424, nullptr, py::kTpName},
    {"tuple_object.ob_item", 408, 456, &PythonLayout::tuple_items, 0},
};

constexpr int kVersionAt = 8, kFreeThreadedAt = 16;  // after the 8-byte cookie

}  // namespace

bool check_python_debug_offsets(InterpMemory& mem, uint64_t runtime, const PythonLayout& l,
                                uint32_t version) {
  if (l.minor < 13) return true;
  const std::string python = "CPython 3." + std::to_string(l.minor);
  if (l.minor > 14)
    throw Error("rewind does not know where " + python +
                "'s _Py_DebugOffsets keeps its offsets: its frames cannot be read");
  std::vector<uint8_t> cookie = mem.bytes(runtime, 8);
  if (std::memcmp(cookie.data(), "xdebugpy", 8) != 0) return false;
  uint64_t published = mem.u64(runtime + kVersionAt);
  if (published != version)
    throw Error(python + "'s _Py_DebugOffsets names version " + std::to_string(published) +
                ", Py_Version " + std::to_string(version) + ": its frames cannot be read");
  if (mem.u64(runtime + kFreeThreadedAt))
    throw Error("free-threaded " + python +
                " (built with --disable-gil) is not supported: its frames have another layout");
  for (const Published& p : kPublished) {
    int at = l.minor == 13 ? p.at_13 : p.at_14;
    int expected = p.member ? l.*p.member : p.fixed;
    uint64_t actual = mem.u64(runtime + uint64_t(at));
    if (actual != uint64_t(expected))
      throw Error(python + "'s _Py_DebugOffsets puts " + p.name + " at " + std::to_string(actual) +
                  ", rewind's table at " + std::to_string(expected) +
                  ": this build's layout is not one rewind knows, its frames cannot be read");
  }
  return true;
}

}  // namespace rwd
