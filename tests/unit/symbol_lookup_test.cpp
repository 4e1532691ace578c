// SymbolTable::lookup: the names a function breakpoint and rewind/calls accept for a symbol
// (engine/symbols/symbol_table.h): its mangled name, its demangled name, and the demangled
// name without its parameter list; never a prefix of any of them.
#include <catch2/catch.hpp>

#include "engine/symbols/symbol_table.h"

using namespace rwd;

namespace {

SymbolTable table() {
  SymbolTable t;
  t.add({{"main", 0x1000, 16, true, true},
         {"_ZN5Shape4areaEv", 0x2000, 32, true, true},  // Shape::area()
         {"_ZN5Shape4areaEi", 0x3000, 32, true, true},  // Shape::area(int)
         {"_ZN5ShapeclEv", 0x4000, 8, true, true},      // Shape::operator()()
         {"_ZN5Shape5areasEv", 0x5000, 8, true, true},  // Shape::areas()
         {"counter", 0x6000, 4, false, true}});
  t.finish();
  return t;
}

std::vector<uint64_t> addrs(const SymbolTable& t, std::string_view name) {
  std::vector<uint64_t> out;
  for (const Symbol* s : t.lookup(name)) out.push_back(s->addr);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("a symbol is found by its mangled, demangled and bare names") {
  SymbolTable t = table();
  CHECK(addrs(t, "main") == std::vector<uint64_t>{0x1000});
  CHECK(addrs(t, "_ZN5Shape4areaEv") == std::vector<uint64_t>{0x2000});
  CHECK(addrs(t, "Shape::area(int)") == std::vector<uint64_t>{0x3000});
  // Without parameters: every overload.
  CHECK(addrs(t, "Shape::area") == std::vector<uint64_t>{0x2000, 0x3000});
  CHECK(addrs(t, "Shape::operator()") == std::vector<uint64_t>{0x4000});
  CHECK(addrs(t, "counter") == std::vector<uint64_t>{0x6000});
}

TEST_CASE("a prefix of a symbol's name finds nothing") {
  SymbolTable t = table();
  CHECK(addrs(t, "Shape::are").empty());
  CHECK(addrs(t, "Shape").empty());
  CHECK(addrs(t, "mai").empty());
  CHECK(addrs(t, "Shape::area(").empty());
  CHECK(addrs(t, "").empty());
}

TEST_CASE("the symbols judge whether a function of a name may have code") {
  SymbolTable whole;
  whole.add({{"main", 0x1000, 16, true, true},
             {"loop_sum.constprop.0", 0x2000, 32, true, false},   // a gcc clone, local
             {"_ZN3geo6Square4areaEv", 0x3000, 32, true, true},   // geo::Square::area()
             {"_ZN3geo5twiceIiEET_S1_", 0x4000, 8, true, false},  // int geo::twice<int>(int)
             {"__libc_start_main", 0x5000, 8, true, true},
             {"counter", 0x6000, 4, false, true}});
  whole.finish();
  CHECK(whole.may_name_function("main"));
  CHECK(whole.may_name_function("loop_sum"));
  CHECK(whole.may_name_function("area"));
  CHECK(whole.may_name_function("geo::Square::area"));
  CHECK(whole.may_name_function("twice"));
  CHECK(whole.may_name_function("_ZN3geo6Square4areaEv"));  // a linkage name
  // Not a whole word of any function symbol; a data symbol does not count.
  CHECK_FALSE(whole.may_name_function("start"));
  CHECK_FALSE(whole.may_name_function("loop"));
  CHECK_FALSE(whole.may_name_function("counter"));
  CHECK_FALSE(whole.may_name_function("geo::Square::perimeter"));
  // Names the words cannot judge: an operator, a destructor, a template argument list.
  CHECK(whole.may_name_function("geo::Square::operator()"));
  CHECK(whole.may_name_function("geo::Square::~Square"));
  CHECK(whole.may_name_function("geo::twice<long>"));
  // Exported symbols only (.dynsym, a stripped file): nothing can be judged absent.
  SymbolTable exported;
  exported.add({{"main", 0x1000, 16, true, true}});
  exported.finish();
  CHECK(exported.may_name_function("loop"));
}
