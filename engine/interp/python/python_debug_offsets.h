// CPython 3.13 and later publish their own struct offsets for out-of-process tools:
// _Py_DebugOffsets at the start of _PyRuntime (Include/internal/pycore_debug_offsets.h in
// 3.14, pycore_runtime.h in 3.13), with a cookie and the interpreter's version. rewind reads
// frames with its own table (python_layout.h) and checks that table against this copy before
// it trusts it: a build whose layout differs (a free-threaded build, a patched or future
// interpreter) is refused with the field that differs, rather than read wrongly.
#pragma once

#include <cstdint>

#include "engine/interp/interp_frame.h"
#include "engine/interp/python/python_layout.h"

namespace rwd {

/// Checks layout `l` (CPython 3.`l.minor`, 3.13 or later; nothing to check before 3.13)
/// against the _Py_DebugOffsets at runtime address `runtime` (_PyRuntime) in `mem`: its cookie
/// ("xdebugpy"), its version (PY_VERSION_HEX, equal to Py_Version's `version`), that it is
/// not a free-threaded build, and each offset the frame reader uses that it publishes
/// (interpreters, threads, frames, code objects, tuples, type names). False when the cookie
/// is not there: every 3.13+ build initializes it statically, so the interpreter's data is not
/// mapped yet (the dynamic loader maps a file's data segment after the segment the symbols
/// come from). Throws Error with one line naming the first difference; InterpReadError when
/// the struct cannot be read.
bool check_python_debug_offsets(InterpMemory& mem, uint64_t runtime, const PythonLayout& l,
                                uint32_t version);

}  // namespace rwd
