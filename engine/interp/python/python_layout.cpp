#include "engine/interp/python/python_layout.h"

namespace rwd {

namespace {

/// By minor version; -1: the field does not exist in that version. docs/interpreter-frames.md
/// §1.3 has how each was computed (offsetof against the version's own headers).
const PythonLayout kLayouts[] = {
    {
        .minor = 11,
        .runtime_interpreters_head = 40,
        .interp_threads_head = 16,
        .interp_gc_generations = 672,
        .interp_gc_permanent = 752,
        .tstate_next = 8,
        .tstate_cframe = 56,
        .cframe_current_frame = 8,
        .tstate_current_frame = -1,
        .tstate_native_thread_id = 160,
        .frame_code = 32,
        .frame_previous = 48,
        .frame_instr = 56,
        .frame_is_entry = 68,
        .frame_owner = 69,
        .frame_localsplus = 72,
        .owned_by_cstack = -1,
        .function_code = 48,
        .code_consts = 24,
        .code_argcount = 56,
        .code_firstlineno = 72,
        .code_nlocalsplus = 76,
        .code_localsplusnames = 96,
        .code_localspluskinds = 104,
        .code_filename = 112,
        .code_qualname = 128,
        .code_linetable = 136,
        .code_code_adaptive = 184,
        .ascii_data = 48,
        .compact_data = 72,
        .long_tag = false,
    },
    {
        .minor = 12,
        .runtime_interpreters_head = 40,
        .interp_threads_head = 72,
        .interp_gc_generations = 136,
        .interp_gc_permanent = 216,
        .tstate_next = 8,
        .tstate_cframe = 56,
        .cframe_current_frame = 0,
        .tstate_current_frame = -1,
        .tstate_native_thread_id = 144,
        .frame_code = 0,
        .frame_previous = 8,
        .frame_instr = 56,
        .frame_is_entry = -1,
        .frame_owner = 70,
        .frame_localsplus = 72,
        .owned_by_cstack = 3,
        .function_code = 48,
        .code_consts = 24,
        .code_argcount = 52,
        .code_firstlineno = 68,
        .code_nlocalsplus = 72,
        .code_localsplusnames = 96,
        .code_localspluskinds = 104,
        .code_filename = 112,
        .code_qualname = 128,
        .code_linetable = 136,
        .code_code_adaptive = 192,
        .ascii_data = 40,
        .compact_data = 56,
        .long_tag = true,
    },
    {
        .minor = 13,
        .runtime_interpreters_head = 632,
        .interp_threads_head = 7344,
        .interp_gc_generations = 7424,
        .interp_gc_permanent = 7504,
        .tstate_next = 8,
        .tstate_cframe = -1,
        .cframe_current_frame = -1,
        .tstate_current_frame = 72,
        .tstate_native_thread_id = 160,
        .frame_code = 0,
        .frame_previous = 8,
        .frame_instr = 56,
        .frame_is_entry = -1,
        .frame_owner = 70,
        .frame_localsplus = 72,
        .owned_by_cstack = 3,
        .function_code = 48,
        .code_consts = 24,
        .code_argcount = 52,
        .code_firstlineno = 68,
        .code_nlocalsplus = 72,
        .code_localsplusnames = 96,
        .code_localspluskinds = 104,
        .code_filename = 112,
        .code_qualname = 128,
        .code_linetable = 136,
        .code_code_adaptive = 200,
        .ascii_data = 40,
        .compact_data = 56,
        .long_tag = true,
    },
};

}  // namespace

const PythonLayout* python_layout(int minor) {
  for (const PythonLayout& l : kLayouts)
    if (l.minor == minor) return &l;
  return nullptr;
}

}  // namespace rwd
