// Module::functions_named on real files: a module whose symbols cannot name the function is
// answered without its DWARF (libc's takes about 0.5 s to read whole, and a function
// breakpoint or a rewind/calls query looks in every module), and the answer is never
// another than the DWARF's own: every function with code that a module's DWARF names has a
// symbol that SymbolTable::may_name_function finds, in the demo programs (gcc -O0, -O2 with
// its clones, clang, C++) and in libc.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/symbols/module.h"

using namespace rwd;

namespace {

/// The module of an ELF file loaded where it was linked.
Module module_of(const std::string& path) {
  return Module(path, path, ElfImage::open(path)->first_load_vaddr());
}

std::string last_component(const std::string& name) {
  size_t sep = name.rfind("::");
  return sep == std::string::npos ? name : name.substr(sep + 2);
}

}  // namespace

TEST_CASE("a function lookup opens a module's DWARF only where a symbol may name it", "[symbols]") {
  Module libc = module_of("/lib/x86_64-linux-gnu/libc.so.6");
  REQUIRE(libc.has_debug_info());  // libc6-dbg, which scripts/install-deps.sh installs
  // A function of the demo program, which libc does not define.
  CHECK(libc.functions_named("loop_sum").empty());
  CHECK(libc.functions_named("geo::Square::area").empty());
  CHECK_FALSE(libc.dwarf_tried());
  // A static function of libc's: the DWARF is read, and finds it.
  std::vector<const FunctionInfo*> fns = libc.functions_named("msort_with_tmp");
  CHECK(libc.dwarf_tried());
  REQUIRE(fns.size() == 1);
  CHECK(fns[0]->name == "msort_with_tmp");
  // The demo program's own function, in the demo program.
  Module demo = module_of(DEMO_GCC_O2);
  CHECK(demo.functions_named("loop_sum").size() >= 1);
}

TEST_CASE("every function a module's DWARF names, its symbols may name too", "[symbols]") {
  std::vector<std::string> files = {DEMO_GCC_O0, DEMO_GCC_O2, DEMO_GCC_NOPIE, DEMO_CPP,
                                    "/lib/x86_64-linux-gnu/libc.so.6"};
  if (std::string(DEMO_CLANG_O0).size()) files.push_back(DEMO_CLANG_O0);
  if (std::string(DEMO_CLANG_O2).size()) files.push_back(DEMO_CLANG_O2);
  for (const std::string& file : files) {
    INFO(file);
    Module m = module_of(file);
    DwarfIndex* dw = m.dwarf();
    REQUIRE(dw);
    std::set<std::string> names;
    for (size_t u = 0; u < dw->units().size(); ++u)
      for (const FunctionInfo& f : dw->functions(u)) {
        if (!f.name.empty()) {
          names.insert(f.name);
          names.insert(last_component(f.name));
        }
        if (!f.linkage.empty()) names.insert(f.linkage);
      }
    CHECK(names.size() > (file.find("libc") != std::string::npos ? 1000u : 5u));
    for (const std::string& name : names) {
      INFO(name);
      CHECK(m.symbols().may_name_function(name));
    }
  }
  // A name no symbol holds, in the same files: judged absent (the tables are whole ones).
  for (const std::string& file : files) {
    INFO(file);
    CHECK_FALSE(module_of(file).symbols().may_name_function("rewind_defines_no_such_function"));
  }
}
