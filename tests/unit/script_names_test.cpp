// Which function breakpoint names are a script's (engine/debugger/r_breakpoints.h,
// python_breakpoints.h): R's syntactic names and Python's qualified names.
#include <catch2/catch.hpp>

#include "engine/debugger/python_breakpoints.h"
#include "engine/debugger/r_breakpoints.h"

using namespace rwd;

TEST_CASE("R function names: R's syntactic names, not reserved words") {
  for (const char* name : {"accumulate", "my.fun", ".hidden", "f_2", "x", "."})
    CHECK(RBreakpoints::is_r_name(name));
  for (const char* name : {"", "2fun", ".2x", "_f", "if", "function", "TRUE", "NA_real_", "in",
                           "a-b", "ns::f", "f()", "a b", "x$y"}) {
    INFO(name);
    CHECK(!RBreakpoints::is_r_name(name));
  }
}

TEST_CASE("Python function names: a module and a qualified name, dotted") {
  CHECK(PythonBreakpoints::is_python_function("helper.accumulate"));
  CHECK(PythonBreakpoints::is_python_function("pkg.mod.Klass.method"));
  CHECK(!PythonBreakpoints::is_python_function("accumulate"));
  CHECK(!PythonBreakpoints::is_python_function("ns::f"));
  CHECK(!PythonBreakpoints::is_python_function(".helper"));
}
