// CPython's offsets (engine/interp/python/python_layout.{h,cpp} and the shared py:: ones)
// cross-checked against DWARF: python_layout_probe.c is built with -g against a CPython
// version's own headers, and every offset and size the frame reader uses is read back from
// that program's debug information with rewind's DWARF reader.
// Environment: PYTHON_LAYOUT_PROBE (the probe built for one version), PYTHON_LAYOUT_MINOR
// (that version's minor number).
#include "engine/interp/python/python_layout.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <sstream>
#include <string>

#include "engine/symbols/module.h"
#include "engine/symbols/types.h"

namespace {

using namespace rwd;

/// Offsets and sizes of types in one program's DWARF.
class DwarfLayout {
 public:
  explicit DwarfLayout(const std::string& file) : module_(file, file, 0) {
    REQUIRE(module_.dwarf() != nullptr);
  }
  /// The type named `name` (a typedef, struct or union).
  TypePtr type(const std::string& name) {
    auto die = module_.dwarf()->type_named(name);
    INFO("type " << name);
    REQUIRE(die);
    return module_.types().read(*die);
  }
  /// The byte offset of member path `path` ("interpreters.head") in type `name`; -1 when a
  /// member on the path does not exist.
  int offset(const std::string& name, const std::string& path) {
    TypePtr t = type(name);
    int off = 0;
    std::istringstream parts(path);
    std::string part;
    while (std::getline(parts, part, '.')) {
      const Type* s = strip(t.get());
      if (!s) return -1;
      const Member* found = nullptr;
      for (const Member& m : s->members)
        if (m.name == part) found = &m;
      if (!found) return -1;
      off += int(found->offset);
      t = found->type;
    }
    return off;
  }
  /// The value of enumerator `name` of enum type `type`; -1 when it has none of that name.
  int64_t enumerator(const std::string& type, const std::string& name) {
    const Type* t = strip(this->type(type).get());
    if (t)
      for (const auto& [n, v] : t->enumerators)
        if (n == name) return v;
    return -1;
  }
  /// sizeof(name).
  int size(const std::string& name) { return int(type_size(*type(name))); }

 private:
  Module module_;
};

}  // namespace

TEST_CASE("CPython offsets match the DWARF of the version's own headers", "[python][layout]") {
  const char* probe = std::getenv("PYTHON_LAYOUT_PROBE");
  const char* minor_text = std::getenv("PYTHON_LAYOUT_MINOR");
  REQUIRE(probe);
  REQUIRE(minor_text);
  int minor = std::atoi(minor_text);
  const PythonLayout* layout = python_layout(minor);
  INFO("CPython 3." << minor << ", probe " << probe);
  REQUIRE(layout);
  const PythonLayout& L = *layout;
  DwarfLayout dw(probe);

  CHECK(dw.offset("_PyRuntimeState", "interpreters.head") == L.runtime_interpreters_head);
  CHECK(dw.offset("PyInterpreterState", "threads.head") == L.interp_threads_head);
  CHECK(dw.offset("PyInterpreterState", "gc.generations") == L.interp_gc_generations);
  CHECK(dw.offset("PyInterpreterState", "gc.permanent_generation") == L.interp_gc_permanent);
  CHECK(dw.offset("PyFunctionObject", "func_code") == L.function_code);
  CHECK(dw.offset("PyThreadState", "next") == L.tstate_next);
  CHECK(dw.offset("PyThreadState", "native_thread_id") == L.tstate_native_thread_id);
  CHECK(dw.offset("PyThreadState", "curexc_type") == L.tstate_curexc_type);  // -1 after 3.11
  CHECK(dw.offset("PyThreadState", "curexc_value") == L.tstate_curexc_value);
  CHECK(dw.offset("PyThreadState", "curexc_traceback") == L.tstate_curexc_traceback);
  CHECK(dw.offset("PyThreadState", "current_exception") == L.tstate_current_exception);
  CHECK(dw.offset("PyThreadState", "exc_info") == L.tstate_exc_info);
  CHECK(dw.offset("_PyErr_StackItem", "exc_value") == py::kStackItemExcValue);
  CHECK(dw.offset("_PyErr_StackItem", "previous_item") == py::kStackItemPrevious);
  CHECK(dw.enumerator("probe_opcodes", "probe_op_raise_varargs") == L.op_raise_varargs);
  CHECK(dw.enumerator("probe_opcodes", "probe_op_return_value") == L.op_return_value);
  CHECK(dw.enumerator("probe_opcodes", "probe_op_yield_value") == L.op_yield_value);
  CHECK(dw.enumerator("probe_opcodes", "probe_op_extended_arg") == L.op_extended_arg);
  if (minor >= 12)
    CHECK(dw.enumerator("probe_owners", "probe_first_shim_owner") == L.shim_owner_from);
  else
    CHECK(L.shim_owner_from == -1);
  if (minor >= 14)
    CHECK(dw.enumerator("probe_tags", "probe_tag_bits") == int64_t(L.stackref_tag_bits));
  else
    CHECK(L.stackref_tag_bits == 0);
  if (minor < 13) {
    CHECK(dw.offset("PyThreadState", "cframe") == L.tstate_cframe);
    CHECK(dw.offset("_PyCFrame", "current_frame") == L.cframe_current_frame);
    CHECK(L.tstate_current_frame == -1);
  } else {
    CHECK(dw.offset("PyThreadState", "current_frame") == L.tstate_current_frame);
    CHECK(L.tstate_cframe == -1);
  }
  CHECK(dw.offset("_PyInterpreterFrame", minor < 13 ? "f_code" : "f_executable") == L.frame_code);
  CHECK(dw.offset("_PyInterpreterFrame", "previous") == L.frame_previous);
  CHECK(dw.offset("_PyInterpreterFrame", minor < 13 ? "prev_instr" : "instr_ptr") == L.frame_instr);
  CHECK(dw.offset("_PyInterpreterFrame", "is_entry") == L.frame_is_entry);  // -1 after 3.11
  CHECK(dw.offset("_PyInterpreterFrame", "owner") == L.frame_owner);
  CHECK(dw.offset("_PyInterpreterFrame", "localsplus") == L.frame_localsplus);
  CHECK(dw.offset("PyCodeObject", "co_argcount") == L.code_argcount);
  CHECK(dw.offset("PyCodeObject", "co_firstlineno") == L.code_firstlineno);
  CHECK(dw.offset("PyCodeObject", "co_nlocalsplus") == L.code_nlocalsplus);
  CHECK(dw.offset("PyCodeObject", "co_localsplusnames") == L.code_localsplusnames);
  CHECK(dw.offset("PyCodeObject", "co_localspluskinds") == L.code_localspluskinds);
  CHECK(dw.offset("PyCodeObject", "co_filename") == L.code_filename);
  CHECK(dw.offset("PyCodeObject", "co_qualname") == L.code_qualname);
  CHECK(dw.offset("PyCodeObject", "co_linetable") == L.code_linetable);
  CHECK(dw.offset("PyCodeObject", "co_consts") == L.code_consts);
  CHECK(dw.offset("PyCodeObject", "co_code_adaptive") == L.code_code_adaptive);
  CHECK(dw.size("PyASCIIObject") == L.ascii_data);
  CHECK(dw.size("PyCompactUnicodeObject") == L.compact_data);
  CHECK(L.long_tag == (dw.offset("PyLongObject", "long_value.lv_tag") >= 0));

  // The offsets every supported version shares.
  CHECK(dw.offset("PyObject", "ob_type") == py::kObType);
  CHECK(dw.offset("PyVarObject", "ob_size") == py::kObSize);
  CHECK(dw.offset("PyTypeObject", "tp_name") == py::kTpName);
  CHECK(dw.offset("PyTypeObject", "tp_flags") == py::kTpFlags);
  CHECK(dw.offset("PyASCIIObject", "length") == py::kStrLength);
  CHECK(dw.offset("PyASCIIObject", "state") == py::kStrState);
  CHECK(dw.offset("PyBytesObject", "ob_sval") == py::kBytesData);
  CHECK(dw.offset("PyTupleObject", "ob_item") == L.tuple_items);
  CHECK(dw.offset("PyListObject", "ob_item") == py::kListItems);
  CHECK(dw.offset("PyLongObject", minor < 12 ? "ob_digit" : "long_value.ob_digit") ==
        py::kLongDigits);
  CHECK(dw.offset("PyFloatObject", "ob_fval") == py::kFloatValue);
  CHECK(dw.offset("PyDictObject", "ma_used") == py::kDictUsed);
  CHECK(dw.offset("PyCellObject", "ob_ref") == py::kCellRef);
  CHECK(dw.offset("PyBaseExceptionObject", "args") == py::kExcArgs);
  CHECK(dw.offset("PyBaseExceptionObject", "traceback") == py::kExcTraceback);
  CHECK(dw.offset("PyTracebackObject", "tb_next") == py::kTbNext);
  CHECK(dw.offset("PyTracebackObject", "tb_frame") == py::kTbFrame);
  CHECK(dw.offset("PyTracebackObject", "tb_lasti") == py::kTbLasti);
  CHECK(dw.offset("PyTracebackObject", "tb_lineno") == py::kTbLineno);
  CHECK(dw.offset("PyFrameObject", "f_frame") == py::kFrameObjectFrame);
}
