#include "engine/interp/python/python_frames.h"

#include <algorithm>

#include "engine/arch/registers.h"
#include "engine/interp/python/python_debug_offsets.h"
#include "engine/interp/python/python_objects.h"

namespace rwd {

namespace {

constexpr int kMaxFrames = 4096;  // as py-spy: a chain longer than this is garbage
constexpr int kMaxThreads = 4096;
constexpr int kMaxLocals = 1024;

/// A code object's local variables (co_localsplusnames, co_localspluskinds): their kinds,
/// one byte each (py::kFast*), and the tuple of their names.
struct LocalsTable {
  std::vector<uint8_t> kinds;
  uint64_t names = 0;
  /// Local `i`'s name. Throws InterpReadError.
  std::string name(InterpMemory& mem, const PythonLayout& l, size_t i) const {
    return python_str(mem, l, mem.u64(names + uint64_t(l.tuple_items) + 8 * uint64_t(i)), 256);
  }
};

/// The locals table of the code object at `code`. Throws InterpReadError.
LocalsTable locals_table(InterpMemory& mem, const PythonLayout& l, uint64_t code) {
  int nlocals = mem.i32(code + uint64_t(l.code_nlocalsplus));
  if (nlocals < 0 || nlocals > kMaxLocals) throw InterpReadError("a bad local count");
  LocalsTable t;
  t.names = mem.u64(code + uint64_t(l.code_localsplusnames));
  uint64_t kinds_obj = mem.u64(code + uint64_t(l.code_localspluskinds));
  t.kinds = mem.bytes(kinds_obj + py::kBytesData, size_t(nlocals));
  return t;
}

}  // namespace

std::optional<PythonReader> PythonReader::find(const ModuleList& modules, InterpMemory& mem) {
  uint64_t runtime = data_symbol_address(modules, "_PyRuntime");
  if (!runtime) return std::nullopt;
  uint64_t version_at = data_symbol_address(modules, "Py_Version");
  if (!version_at)
    throw Error(
        "this CPython is older than 3.11: its Python frames cannot be read (3.11 to 3.14 "
        "can)");
  // The symbols are known from the file's first mapping; a dynamic loader run as a command
  // (ld.so PROGRAM) maps the data segment after it: until then there is no CPython to read.
  uint32_t version = 0;
  try {
    version = mem.u32(version_at);
  } catch (const InterpReadError&) {
    return std::nullopt;
  }
  int major = int(version >> 24), minor = int((version >> 16) & 0xff);
  const PythonLayout* l = major == 3 ? python_layout(minor) : nullptr;
  if (!l)
    throw Error("CPython " + std::to_string(major) + "." + std::to_string(minor) +
                " is not supported: rewind reads the Python frames of 3.11 to 3.14");
  try {
    if (!check_python_debug_offsets(mem, runtime, *l, version)) return std::nullopt;
  } catch (const InterpReadError&) {
    return std::nullopt;  // its data not mapped yet, as Py_Version above
  }
  return PythonReader(*l, runtime, version, data_symbol_address(modules, "PyFunction_Type"),
                      function_parts(mem.target(), modules, "_PyEval_EvalFrameDefault"));
}

std::string PythonReader::version() const {
  return std::to_string(version_ >> 24) + "." + std::to_string((version_ >> 16) & 0xff) + "." +
         std::to_string((version_ >> 8) & 0xff);
}

uint64_t PythonReader::first_thread(InterpMemory& mem) const {
  uint64_t interp = mem.u64(runtime_ + uint64_t(layout_->runtime_interpreters_head));
  if (!interp) return 0;
  return mem.u64(interp + uint64_t(layout_->interp_threads_head));
}

uint64_t PythonReader::thread_state(InterpMemory& mem, pid_t tid) const {
  const PythonLayout& l = *layout_;
  uint64_t t = first_thread(mem);
  for (int n = 0; t && n < kMaxThreads; ++n, t = mem.u64(t + uint64_t(l.tstate_next)))
    if (mem.u64(t + uint64_t(l.tstate_native_thread_id)) == uint64_t(tid)) return t;
  return 0;
}

uint64_t PythonReader::frame_word(InterpMemory& mem, uint64_t tstate) const {
  const PythonLayout& l = *layout_;
  if (l.tstate_current_frame >= 0) return tstate + uint64_t(l.tstate_current_frame);
  uint64_t cframe = mem.u64(tstate + uint64_t(l.tstate_cframe));
  return cframe ? cframe + uint64_t(l.cframe_current_frame) : 0;
}

uint64_t PythonReader::current_frame_word(InterpMemory& mem, pid_t tid) const {
  uint64_t tstate = thread_state(mem, tid);
  return tstate ? frame_word(mem, tstate) : 0;
}

std::vector<InterpFrame> PythonReader::stack(InterpMemory& mem, pid_t tid, StackDepth depth) const {
  const PythonLayout& l = *layout_;
  std::vector<InterpFrame> out;
  uint64_t tstate = 0;
  try {
    tstate = thread_state(mem, tid);
  } catch (const InterpReadError&) {
    return out;  // the interpreter is not (or no longer) in a readable state
  }
  if (!tstate) return out;
  uint64_t frame = 0;
  try {
    uint64_t word = frame_word(mem, tstate);
    frame = word ? mem.u64(word) : 0;
  } catch (const InterpReadError& e) {
    InterpFrame f;
    f.language = "python";
    f.error = std::string("frame unavailable: ") + e.what();
    out.push_back(f);
    return out;
  }
  for (int n = 0; frame && n < kMaxFrames && out.size() < depth.frames; ++n) {
    uint64_t previous = 0;
    try {
      previous = mem.u64(frame + uint64_t(l.frame_previous));
      if (l.shim_owner_from >= 0 && mem.u8(frame + uint64_t(l.frame_owner)) >= l.shim_owner_from) {
        frame = previous;  // a shim frame of a C call into the eval loop, or the interpreter's
        continue;
      }
      InterpFrame f = read_frame(mem, frame, out.size() < depth.with_locals);
      if (!f.function.empty() || f.entry) out.push_back(std::move(f));
    } catch (const InterpReadError& e) {
      InterpFrame f;
      f.language = "python";
      f.address = frame;
      f.error = std::string("frame unavailable: ") + e.what();
      out.push_back(f);
      break;
    }
    frame = previous;
  }
  return out;
}

uint64_t PythonReader::local_slot(InterpMemory& mem, uint64_t frame,
                                  const std::string& name) const {
  const PythonLayout& l = *layout_;
  LocalsTable t = locals_table(mem, l, frame_code(mem, frame));
  for (size_t i = 0; i < t.kinds.size(); ++i) {
    if ((t.kinds[i] & py::kFastHidden) || t.name(mem, l, i) != name) continue;
    if (t.kinds[i] & (py::kFastCell | py::kFastFree))
      throw Error("\"" + name +
                  "\" is shared with a nested function (a cell variable): its history cannot be "
                  "followed");
    return frame + uint64_t(l.frame_localsplus) + 8 * uint64_t(i);
  }
  throw Error("\"" + name + "\" is not a local variable of this Python frame");
}

bool PythonReader::on_stack(InterpMemory& mem, pid_t tid, uint64_t frame) const {
  uint64_t f = current_frame(mem, tid);
  for (int n = 0; f && n < kMaxFrames; ++n, f = mem.u64(f + uint64_t(layout_->frame_previous)))
    if (f == frame) return true;
  return false;
}

PythonReader::FrameExit PythonReader::frame_exit(InterpMemory& mem, uint64_t frame) const {
  const PythonLayout& l = *layout_;
  FrameExit out;
  uint64_t code = frame_code(mem, frame);
  uint64_t bytecode = code + uint64_t(l.code_code_adaptive);
  uint64_t instr = mem.u64(frame + uint64_t(l.frame_instr));
  if (instr < bytecode) return out;  // (not started)
  int op = mem.u8(instr);            // a code unit: opcode, then its argument's low byte
  auto is = [op](int code_op) { return code_op >= 0 && op == code_op; };
  if (is(l.op_yield_value) || is(l.op_instrumented_yield_value)) {
    out.kind = FrameExit::Yielded;
  } else if (is(l.op_return_value) || is(l.op_instrumented_return_value)) {
    int32_t n = mem.i32(code + uint64_t(l.code_nlocalsplus));
    if (n < 0 || n > (1 << 20)) throw InterpReadError("a bad co_nlocalsplus");
    out.kind = FrameExit::Returned;
    out.object =
        stackref_object(l, mem.u64(frame + uint64_t(l.frame_localsplus) + 8 * uint64_t(n)));
  } else if (is(l.op_return_const) || is(l.op_instrumented_return_const)) {
    uint64_t oparg = mem.u8(instr + 1);
    int shift = 8;
    for (uint64_t at = instr;
         at >= bytecode + 2 && shift < 32 && mem.u8(at - 2) == l.op_extended_arg;
         at -= 2, shift += 8)
      oparg |= uint64_t(mem.u8(at - 1)) << shift;
    uint64_t consts = mem.u64(code + uint64_t(l.code_consts));
    if (oparg >= uint64_t(std::max<int64_t>(mem.i64(consts + py::kObSize), 0)))
      throw InterpReadError("RETURN_CONST past its code's constants");
    out.kind = FrameExit::Returned;
    out.object = mem.u64(consts + uint64_t(l.tuple_items) + 8 * oparg);
  }
  return out;
}

bool PythonReader::running_or_entering(InterpMemory& mem, pid_t tid, uint64_t frame) const {
  uint64_t current = current_frame(mem, tid);
  if (mem.u64(frame + uint64_t(layout_->frame_previous)) == current) return true;
  uint64_t code = frame_code(mem, frame);
  if (mem.u64(frame + uint64_t(layout_->frame_instr)) <
      code + uint64_t(layout_->code_code_adaptive))
    return true;
  return on_stack(mem, tid, frame);
}

InterpFrame PythonReader::read_frame(InterpMemory& mem, uint64_t frame, bool with_locals) const {
  const PythonLayout& l = *layout_;
  InterpFrame f;
  f.language = "python";
  f.address = frame;
  f.step_word = step_word(frame);
  if (l.frame_is_entry >= 0) f.entry = mem.u8(frame + uint64_t(l.frame_is_entry)) != 0;
  uint64_t code = frame_code(mem, frame);
  if (python_type_name(mem, code) != "code")
    throw InterpReadError("frame 0x" + hex(frame) + " has no code object");
  uint64_t instr = mem.u64(frame + uint64_t(l.frame_instr));
  uint64_t bytecode = code + uint64_t(l.code_code_adaptive);
  if (instr < bytecode) {
    f.function.clear();  // incomplete: the frame has not started (_PyFrame_IsIncomplete)
    return f;
  }
  f.function = python_str(mem, l, mem.u64(code + uint64_t(l.code_qualname)), 512);
  f.file = python_str(mem, l, mem.u64(code + uint64_t(l.code_filename)), 4096);
  uint64_t table = mem.u64(code + uint64_t(l.code_linetable));
  int64_t table_len = mem.i64(table + py::kObSize);
  if (table_len < 0 || table_len > (1 << 24)) throw InterpReadError("a bad line table");
  std::vector<uint8_t> lt = mem.bytes(table + py::kBytesData, size_t(table_len));
  f.line = python_line(lt, mem.i32(code + uint64_t(l.code_firstlineno)), (instr - bytecode) / 2);
  if (!with_locals) return f;

  int argcount = mem.i32(code + uint64_t(l.code_argcount));
  LocalsTable t = locals_table(mem, l, code);
  const std::vector<uint8_t>& kinds = t.kinds;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] & py::kFastHidden) continue;
    uint64_t value =
        stackref_object(l, mem.u64(frame + uint64_t(l.frame_localsplus) + 8 * uint64_t(i)));
    if (!value) continue;  // not bound yet
    InterpVariable v;
    v.name = t.name(mem, l, i);
    v.argument = int(i) < argcount;
    try {
      if ((kinds[i] & (py::kFastCell | py::kFastFree)) && python_type_name(mem, value) == "cell") {
        value = mem.u64(value + py::kCellRef);
        if (!value) continue;
      }
      v.value = python_repr(mem, l, value, v.type);
    } catch (const InterpReadError& e) {
      v.value = std::string("<unreadable: ") + e.what() + ">";
    }
    f.locals.push_back(std::move(v));
  }
  return f;
}

}  // namespace rwd
