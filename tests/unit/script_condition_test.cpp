// Breakpoint conditions in a script's language (engine/interp/script_condition.h), over
// locals as the Python and R readers format them.
#include "engine/interp/script_condition.h"

#include <catch2/catch.hpp>

#include "engine/errors.h"

using namespace rwd;

namespace {

InterpVariable local(const char* name, const char* type, const char* value) {
  InterpVariable v;
  v.name = name;
  v.type = type;
  v.value = value;
  return v;
}

}  // namespace

TEST_CASE("R conditions: R's operators and literals over R locals") {
  std::vector<InterpVariable> locals = {local("n", "integer", "3L"),
                                        local("x", "numeric", "2.5"),
                                        local("label", "character", "\"odd\""),
                                        local("done", "logical", "FALSE"),
                                        local("v", "integer", "c(1L, 2L) [2]"),
                                        local("my.var", "numeric", "7")};
  auto holds = [&](const char* c) { return script_condition_holds(ScriptLanguage::R, c, locals); };
  CHECK(holds("n >= 2 && label == \"odd\""));
  CHECK(holds("n >= 2 & label == 'odd'"));
  CHECK_FALSE(holds("n > 3 || x < 1"));
  CHECK(holds("n == 3L"));
  CHECK(holds("!done"));
  CHECK(holds("done == FALSE | F"));
  CHECK(holds("n != 4"));
  CHECK(holds("my.var > x"));
  CHECK(holds("(n == 3) && !(x == 2)"));
  // A longer vector cannot be compared from memory; a missing local is named.
  CHECK_THROWS_AS(holds("v == 1"), Error);
  CHECK_THROWS_WITH(holds("m == 1"), Catch::Contains("\"m\" is not a local"));
  // Python's words are not R's.
  CHECK_THROWS_AS(holds("n == 3 and x > 1"), Error);
  CHECK_THROWS_WITH(check_script_condition(ScriptLanguage::R, "(n >= 2"),
                    Catch::Contains("not closed"));
}

TEST_CASE("Python conditions keep Python's syntax") {
  std::vector<InterpVariable> locals = {local("n", "int", "3"), local("label", "str", "'odd'"),
                                        local("x", "NoneType", "None")};
  auto holds = [&](const char* c) {
    return script_condition_holds(ScriptLanguage::Python, c, locals);
  };
  CHECK(holds("n >= 2 and label == 'odd'"));
  CHECK(holds("x is None and not n == 4"));
  CHECK_THROWS_AS(holds("n >= 2 && x"), Error);
  CHECK(script_log_message("n is {n}, {nope}", locals) == "n is 3, <no local nope>");
}
