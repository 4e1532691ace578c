// Symbols, call stacks, variables and expressions on tests/programs/symbols_demo.c and
// symbols_demo_cpp.cpp built by gcc at -O0 and -O2 and by clang, stopped live under ptrace
// and inside a replay: both must show the same thing.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/symbols/stop_point.h"

using namespace rwd;
using test::line_of;
using test::LiveStop;
using test::ReplayStop;

namespace {

/// One build of a demo program.
struct Build {
  const char* path;
  bool optimized;
  const char* compiler;
};

std::vector<Build> c_builds() {
  std::vector<Build> b = {{DEMO_GCC_O0, false, "gcc"},
                          {DEMO_GCC_NOPIE, false, "gcc -no-pie"},
                          {DEMO_GCC_O2, true, "gcc"}};
  if (std::string(DEMO_CLANG_O0).size()) b.push_back({DEMO_CLANG_O0, false, "clang"});
  if (std::string(DEMO_CLANG_O2).size()) b.push_back({DEMO_CLANG_O2, true, "clang"});
  return b;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

TEMPLATE_TEST_CASE("frame and variables in an inner block", "[symbols]", LiveStop, ReplayStop) {
  for (const Build& b : c_builds()) {
    INFO(b.compiler << (b.optimized ? " -O2 " : " -O0 ") << b.path);
    TestType s(b.path, 42);
    REQUIRE(s.frames.size() >= 3);
    CHECK(s.frames[0].function == "stop_here");
    CHECK(ends_with(s.frames[0].file, "tests/programs/symbols_demo.c"));
    CHECK(s.frames[0].line == line_of(SOURCE_C, "void stop_here(int tag)"));
    CHECK(s.frames[1].function == "main");
    CHECK(s.frames[1].line == line_of(SOURCE_C, "stop_here(inner);"));
    CHECK(s.frames[1].cfa > s.frames[0].cfa);

    CHECK(s.var(1, "count") == "7");
    CHECK(s.var(1, "ratio") == "2.5");
    CHECK(s.var(1, "inner") == "42");
    CHECK(s.var(1, "c") == "GREEN");
    CHECK(s.var(1, "values") == "{5, 9, 1, 3}");
    CHECK(s.var(1, "tri") ==
          "{name = \"triangle\", corners = {{x = 0, y = 0}, {x = 4, y = 0}, {x = 0, y = 3}}, "
          "area = 6, color = BLUE, flags = 5, visible = 1}");
    CHECK(s.var(1, "global_counter") == "42");
    CHECK(s.var(1, "grid") == "{{1, 2, 3}, {4, 5, 6}}");
    std::string greeting = s.var(1, "greeting");
    CHECK(starts_with(greeting, "0x"));
    CHECK(ends_with(greeting, " \"hello\""));

    // The inner block's local comes first, as in gdb's "info locals".
    auto locals = s.vars->locals(1);
    REQUIRE(!locals.empty());
    CHECK(locals.front().name == "inner");
    auto args = s.vars->arguments(1);
    REQUIRE(args.size() == 2);
    CHECK(args[0].name == "argc");
    CHECK(format_value(args[0].value, *s.target) == "1");

    if (!b.optimized) {
      // The linked list, through the pointer, as a variables view expands it.
      auto list = s.vars->lookup(1, "list");
      REQUIRE(list);
      CHECK(child_count(list->value, *s.target) == 1);
      Value node = list->value;
      for (int expect = 1; expect <= 3; ++expect) {
        auto pointee = children(node, *s.target);
        REQUIRE(pointee.size() == 1);
        auto members = children(pointee[0].value, *s.target);
        REQUIRE(members.size() == 2);
        CHECK(members[0].name == "value");
        CHECK(format_value(members[0].value, *s.target) == std::to_string(expect));
        node = members[1].value;
      }
      CHECK(format_value(node, *s.target) == "0x0");
      CHECK(s.var(1, "temp") == "21");
    } else if (std::string(b.compiler) == "gcc") {
      // Not computed yet at this point of main: gcc -O2 gives it no location here.
      CHECK(s.var(1, "sum") == "<optimized out>");
    }
  }
}

TEMPLATE_TEST_CASE("backtrace through a recursive function", "[symbols]", LiveStop, ReplayStop) {
  for (const Build& b : c_builds()) {
    INFO(b.compiler << (b.optimized ? " -O2 " : " -O0 ") << b.path);
    TestType s(b.path, 100);
    REQUIRE(s.frames.size() >= 7);
    CHECK(s.frames[0].function == "stop_here");
    for (int i = 1; i <= 5; ++i) {
      CHECK(s.frames[size_t(i)].function == "recurse");
      CHECK(s.frames[size_t(i)].line ==
            line_of(SOURCE_C, i == 1 ? "stop_here(100);" : "int r = recurse(n - 1);"));
      // n at -O2 lives in a register the call clobbers; frames above the innermost get it
      // from the caller's call-site parameters (DW_OP_entry_value).
      if (!b.optimized || i > 1) CHECK(s.var(size_t(i), "n") == std::to_string(i - 1));
    }
    CHECK(s.frames[6].function == "main");
    CHECK(s.frames[6].line == line_of(SOURCE_C, "recurse(4);"));
    for (int i = 1; i < 6; ++i) CHECK(s.frames[size_t(i)].cfa < s.frames[size_t(i) + 1].cfa);
  }
}

TEMPLATE_TEST_CASE("backtrace through libc's qsort into a callback", "[symbols]", LiveStop,
                   ReplayStop) {
  for (const Build& b : c_builds()) {
    INFO(b.compiler << (b.optimized ? " -O2 " : " -O0 ") << b.path);
    TestType s(b.path, 200);
    REQUIRE(s.frames.size() >= 6);
    CHECK(s.frames[0].function == "stop_here");
    CHECK(s.frames[1].function == "compare_ints");
    CHECK(s.frames[1].line == line_of(SOURCE_C, "stop_here(200);"));
    int main_frame = s.frame_of("main");
    REQUIRE(main_frame >= 3);
    CHECK(s.frames[size_t(main_frame)].line == line_of(SOURCE_C, "qsort(values"));
    // Every frame between the callback and main is in libc, and named.
    bool saw_qsort = false, saw_inlined = false;
    for (int i = 2; i < main_frame; ++i) {
      const StackFrame& f = s.frames[size_t(i)];
      REQUIRE(f.module != nullptr);
      CHECK(f.module->path().find("libc.so") != std::string::npos);
      CHECK(!f.function.empty());
      if (f.function.find("qsort") != std::string::npos) saw_qsort = true;
      if (f.inlined) {
        // An inlined call is a frame of its own at the same pc as the function holding it.
        saw_inlined = true;
        CHECK(f.pc == s.frames[size_t(i) + 1].pc);
        CHECK(f.line != 0);
      }
    }
    CHECK(saw_qsort);
    // glibc's msort_with_tmp is inlined into itself and into qsort_r (with libc6-dbg).
    if (s.frames[2].module->has_debug_info()) CHECK(saw_inlined);
    // A function pointer shows the function it points to, as gdb prints it.
    int q = -1;
    for (int i = 2; i < main_frame; ++i)
      if (s.frames[size_t(i)].function.find("qsort_r") != std::string::npos) q = i;
    REQUIRE(q > 0);
    CHECK(ends_with(s.var(size_t(q), "cmp"), " <compare_ints>"));
  }
}

TEMPLATE_TEST_CASE("a double in an SSE register (-O2, innermost frame)", "[symbols]", LiveStop,
                   ReplayStop) {
  for (const Build& b : c_builds()) {
    if (!b.optimized) continue;  // at -O0 arguments reach their stack slots after the prologue
    INFO(b.compiler << " -O2 " << b.path);
    TestType s(b.path, 7, "scaled");
    REQUIRE(!s.frames.empty());
    CHECK(s.frames[0].function == "scaled");
    CHECK(s.var(0, "ratio") == "2.5");  // DW_OP_reg17: xmm0
    CHECK(s.var(0, "factor") == "7");
    CHECK(s.eval(0, "ratio * factor") == "17.5");
  }
}

TEMPLATE_TEST_CASE("C++: std::string, a class with a base class, a template", "[symbols]", LiveStop,
                   ReplayStop) {
  {
    TestType s(DEMO_CPP, 300);
    REQUIRE(s.frames.size() >= 3);
    CHECK(s.frames[1].function == "geo::Square::area");
    CHECK(s.frames[1].line == line_of(SOURCE_CPP, "stop_here(300);"));
    CHECK(s.frames[2].function == "main");
    CHECK(s.var(2, "title") == "\"hello world\"");
    std::string sq = s.var(2, "sq");
    CHECK(starts_with(sq, "{<geo::Shape> = {_vptr.Shape = 0x"));
    CHECK(ends_with(sq, ", sides_ = 4}, side_ = 3}"));
    CHECK(s.eval(1, "this->side_ * 2") == "6");
    CHECK(s.eval(1, "sides_") == "error: No symbol \"sides_\" in current context.");
    CHECK(s.eval(1, "this->sides_") == "4");
    // A reference shows the address it refers to, then the object (the Shape part of sq).
    std::string shape = s.var(2, "shape");
    CHECK(starts_with(shape, "@" + s.eval(2, "&sq") + ": {_vptr.Shape = 0x"));
    CHECK(ends_with(shape, ", sides_ = 4}"));
    CHECK(s.eval(2, "shape.sides_ + 1") == "5");
  }
  {
    TestType s(DEMO_CPP, 400);
    CHECK(s.frames[1].function == "geo::twice<int>");
    std::string value = s.var(1, "value");
    CHECK(ends_with(value, ": 21"));
    CHECK(s.eval(1, "value + 1") == "22");
  }
}

TEST_CASE("addresses map to lines, and lines to addresses", "[symbols]") {
  for (const Build& b : c_builds()) {
    INFO(b.compiler << (b.optimized ? " -O2 " : " -O0 ") << b.path);
    LiveStop s(b.path, 42);
    Module* exe = s.modules.executable();
    REQUIRE(exe);
    REQUIRE(exe->dwarf());
    DwarfIndex& dw = *exe->dwarf();
    for (const char* marker :
         {"stop_here(inner);", "recurse(4);", "sink = r;", "total += i;", "qsort(values"}) {
      uint32_t line = line_of(SOURCE_C, marker), bound = 0;
      auto addrs = dw.line_addresses("symbols_demo.c", line, &bound);
      INFO(marker);
      CHECK(bound == line);
      REQUIRE(!addrs.empty());
      for (uint64_t a : addrs) {
        auto row = dw.line_at(a);
        REQUIRE(row);
        CHECK(row->second.line == line);
        CHECK(row->second.is_stmt);
      }
    }
    // A line without code (a comment) binds to the next line with code.
    uint32_t comment = line_of(SOURCE_C, "// keeps the call from being a tail call");
    uint32_t bound = 0;
    auto moved = dw.line_addresses("tests/programs/symbols_demo.c", comment - 1, &bound);
    CHECK(!moved.empty());
    CHECK(bound >= comment - 1);
    // Function names resolve to addresses, through DWARF and the symbol table alike.
    auto fns = dw.functions_named("loop_sum");
    REQUIRE(fns.size() == 1);
    CHECK(exe->symbols().lookup("loop_sum").front()->addr == fns[0]->entry);
    uint64_t body = dw.after_prologue(*fns[0]);
    CHECK(body >= fns[0]->entry);
    auto row = dw.line_at(body);
    REQUIRE(row);
    CHECK(row->second.line > line_of(SOURCE_C, "int loop_sum(int n)"));
  }
}

TEST_CASE("modules: executable, libc with separate debug info, load biases", "[symbols]") {
  LiveStop s(DEMO_GCC_O0, 42);
  Module* exe = s.modules.executable();
  REQUIRE(exe);
  CHECK(exe->path() == DEMO_GCC_O0);
  CHECK(exe->has_debug_info());
  CHECK(exe->bias() != 0);  // PIE
  LiveStop fixed(DEMO_GCC_NOPIE, 42);
  REQUIRE(fixed.modules.executable());
  CHECK(fixed.modules.executable()->bias() == 0);  // non-PIE: linked where it runs
  CHECK(fixed.frames[1].function == "main");
  Module* libc = nullptr;
  for (const auto& m : s.modules.modules())
    if (m->path().find("libc.so.6") != std::string::npos) libc = m.get();
  REQUIRE(libc);
  CHECK(libc->path() == "/lib/x86_64-linux-gnu/libc.so.6");  // as the dynamic loader names it
  CHECK(libc->build_id().size() == 40);
  CHECK(libc->has_symbols());
  // Debian's libc6-dbg: /usr/lib/debug/.build-id/xx/yyyy.debug, compressed sections.
  CHECK(libc->debug_file() == "/usr/lib/debug/.build-id/" + libc->build_id().substr(0, 2) + "/" +
                                  libc->build_id().substr(2) + ".debug");
  REQUIRE(libc->dwarf());
  auto fns = libc->dwarf()->functions_named("msort_with_tmp");  // a static function
  CHECK(!fns.empty());
  auto sym = libc->symbols().lookup("qsort");
  REQUIRE(!sym.empty());
  CHECK(s.modules.module_at(libc->to_runtime(sym.front()->addr)) == libc);
}

TEMPLATE_TEST_CASE("expressions", "[symbols][expressions]", LiveStop, ReplayStop) {
  for (const Build& b : c_builds()) {
    if (b.optimized) continue;  // -O2 keeps fewer variables; the values below are -O0's
    INFO(b.compiler << " " << b.path);
    TestType s(b.path, 42);
    const std::pair<const char*, const char*> cases[] = {
        {"count", "7"},
        {"count + 1", "8"},
        {"count * ratio", "17.5"},
        {"ratio / 2", "1.25"},
        {"count / 2", "3"},
        {"count % 4", "3"},
        {"-count", "-7"},
        {"!count", "0"},
        {"~count", "-8"},
        {"count << 2", "28"},
        {"count >> 1", "3"},
        {"count & 3", "3"},
        {"count | 8", "15"},
        {"count ^ 5", "2"},
        {"count > 5 && ratio < 3", "1"},
        {"count < 5 || 0", "0"},
        {"count == 7", "1"},
        {"count != 7", "0"},
        {"count >= 7", "1"},
        {"count <= 6", "0"},
        {"tri.name", "\"triangle\""},
        {"tri.corners[1].x", "4"},
        {"tri.corners[2]", "{x = 0, y = 3}"},
        {"tri.area * 2", "12"},
        {"tri.color", "BLUE"},
        {"tri.color == BLUE", "1"},
        {"tri.flags", "5"},
        {"tri.visible", "1"},
        {"list->value", "1"},
        {"list->next->next->value", "3"},
        {"(*list).value", "1"},
        {"list->next->next->next", "0x0"},
        {"*&count", "7"},
        {"values[2]", "1"},
        {"values[1] + values[3]", "12"},
        {"sizeof(values)", "16"},
        {"sizeof(struct shape)", "56"},
        {"sizeof count", "4"},
        {"sizeof(int *)", "8"},
        {"(char)65", "65 'A'"},
        {"'a'", "97 'a'"},
        {"'a' + 1", "98"},
        {"'\\n'", "10 '\\n'"},
        {"\"hi\"", "\"hi\""},
        {"0x10", "16"},
        {"010", "8"},
        {"1.5e1", "15"},
        {"3 / 2.0", "1.5"},
        {"global_counter + 1", "43"},
        {"global_ratio", "0.25"},
        {"greeting[1]", "101 'e'"},
        {"*greeting", "104 'h'"},
        {"grid[1][2]", "6"},
        {"grid[0]", "{1, 2, 3}"},
        {"(long)ratio", "2"},
        {"(double)count / 2", "3.5"},
        {"c", "GREEN"},
        {"(int)c", "5"},
        {"(enum color)6", "BLUE"},
        {"(enum color)200", "INFRARED"},
        {"$rip == $pc", "1"},
        {"$sp != 0", "1"},
        {"inner", "42"},
        {"count > 3 ? 10 : 20", "10"},
        {"-ratio", "-2.5"},
        {"(unsigned char)300", "44 ','"},
        {"1 + 2 * 3", "7"},
        {"(1 + 2) * 3", "9"},
        {"values", "{5, 9, 1, 3}"},
        {"&values[1] - &values[0]", "1"},
        {"*(values + 1)", "9"},
        {"-1 < 0u", "0"},
        {"10 / 0", "error: Division by zero"},
        {"nosuch", "error: No symbol \"nosuch\" in current context."},
        {"count.x", "error: Attempt to extract a component of a value that is not a structure."},
        {"*count", "error: Attempt to take contents of a non-pointer value."},
        {"list->nosuch", "error: There is no member named nosuch."},
        {"count +", "error: A syntax error in expression, near `'."},
        {"count )", "error: A syntax error in expression, near `)'."},
        {"(struct nosuch *)0", "error: No symbol \"struct nosuch\" in current context."},
        {"count[1]", "error: cannot subscript something of type `int'"},
        {"&1", "error: Attempt to take address of value not located in memory."},
        {"list->next->next->next->value", "error: Cannot access memory at address 0x0"},
        {"$nosuch", "error: Invalid register `$nosuch'."},
        {"08", "error: Invalid number \"08\"."},
    };
    for (const auto& [expr, expected] : cases) {
      INFO(expr);
      CHECK(s.eval(1, expr) == expected);
    }
    // Functions: their type and address, as gdb prints them; they decay to pointers.
    std::string fn = s.eval(1, "compare_ints");
    CHECK(starts_with(fn, "{int (const void *, const void *)} 0x"));
    CHECK(ends_with(fn, " <compare_ints>"));
    CHECK(ends_with(s.eval(1, "&compare_ints"), " <compare_ints>"));
    CHECK(s.eval(1, "compare_ints == &compare_ints") == "1");
    CHECK(s.eval(1, "compare_ints == &loop_sum") == "0");
    // Address-valued results: compare with the variables' own addresses.
    auto count = s.vars->lookup(1, "count");
    REQUIRE(count);
    REQUIRE(count->value.loc.kind == Location::Kind::Memory);
    CHECK(s.eval(1, "&count") == hex(count->value.loc.addr));
    CHECK(s.eval(1, "(struct node *)list") == s.eval(1, "list"));
    CHECK(s.eval(1, "*list") == "{value = 1, next = " + s.eval(1, "&n2") + "}");
  }
}

TEST_CASE("separate debug info through .gnu_debuglink, checked by CRC", "[symbols]") {
  // A copy of the demo without a build-id whose DWARF lives in a separate file named by
  // .gnu_debuglink next to it (objcopy's recipe, as distributions once shipped them).
  char tmpl[] = "/tmp/rewind-debuglink.XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string exe = dir + "/demo", dbg = dir + "/demo.debug";
  std::string cmd = "gcc -g -O0 -Wl,--build-id=none -o " + exe +
                    " " SOURCE_C " && objcopy --only-keep-debug " + exe + " " + dbg +
                    " && strip -g " + exe + " && objcopy --add-gnu-debuglink=" + dbg + " " + exe;
  REQUIRE(std::system(cmd.c_str()) == 0);
  {
    LiveStop s(exe, 42);
    Module* m = s.modules.executable();
    REQUIRE(m);
    CHECK(m->build_id().empty());
    CHECK(m->debug_file() == dbg);
    CHECK(s.frames[1].function == "main");
    CHECK(s.frames[1].line == line_of(SOURCE_C, "stop_here(inner);"));
    CHECK(s.var(1, "count") == "7");
  }
  // A debug file that does not match (another build's) is refused: symbols only.
  std::string other = "gcc -g -O0 -DOTHER_BUILD -o " + dir +
                      "/other " SOURCE_C " && objcopy --only-keep-debug " + dir + "/other " + dbg;
  REQUIRE(std::system(other.c_str()) == 0);
  {
    LiveStop s(exe, 42);
    Module* m = s.modules.executable();
    REQUIRE(m);
    CHECK(m->debug_file().empty());
    CHECK(!m->has_debug_info());
    CHECK(m->has_symbols());
    CHECK(s.frames[1].function == "main");  // from the symbol table
    CHECK(s.frames[1].file.empty());
  }
  std::system(("rm -rf " + dir).c_str());
}
