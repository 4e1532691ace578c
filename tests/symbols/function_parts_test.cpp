// function_parts.h on a stripped program whose compiler split a function and left a callee
// unnamed (tests/programs/split_function.c), stopped live under ptrace: the part is found
// from the function's jumps and named in stacks after it; the unnamed callee is found from its
// caller's calls.
#include "engine/symbols/function_parts.h"

#include <catch2/catch.hpp>

#include "tests/symbols/stop_point.h"

using namespace rwd;

TEST_CASE("a function's split-off part is found and named; an unnamed callee is found",
          "[symbols]") {
  // Stopped in rare_event(999), called from loop()'s cold part.
  test::LiveStop s(SPLIT_FUNCTION, 999, "rare_event");
  Module* exe = s.modules.executable();
  REQUIRE(exe);
  REQUIRE(exe->symbols().lookup("loop.cold").empty());  // stripped: the part has no name
  REQUIRE(s.frames.size() >= 3);
  CHECK(s.frames[0].function == "rare_event");
  CHECK(s.frames[1].function.empty());  // in the part, before function_parts
  CHECK(s.frames[2].function == "main");
  uint64_t caller = s.frames[1].pc;

  CodeRanges parts = function_parts(*s.target, s.modules, "loop");
  REQUIRE(parts.size() == 2);
  auto [lo, hi] = s.modules.function_range("loop");
  CHECK(parts[0] == std::make_pair(lo, hi));
  CHECK(!in_ranges({parts[0]}, caller));
  CHECK(in_ranges({parts[1]}, caller));  // the call to rare_event is in the part
  CHECK(s.modules.module_at(parts[1].first) == exe);
  const Symbol* named = exe->function_at(exe->to_link(caller));
  REQUIRE(named);
  CHECK(named->name == "loop");
  s.refresh();
  CHECK(s.frames[1].function == "loop");  // the stack now names the part
  CHECK(s.frames[2].function == "main");
  // Functions without parts: their symbol alone; none for a name no module has.
  CHECK(function_parts(*s.target, s.modules, "display").size() == 1);
  CHECK(function_parts(*s.target, s.modules, "no_such_function").empty());

  // display() calls report(), which no symbol names.
  std::vector<uint64_t> calls = direct_calls(*s.target, s.modules, "display");
  std::vector<uint64_t> unnamed;
  for (uint64_t to : calls)
    if (!exe->function_at(exe->to_link(to))) unnamed.push_back(to);
  REQUIRE(unnamed.size() == 1);
  CHECK(direct_calls(*s.target, s.modules, "no_such_function").empty());
  // It is report(): display(2000) calls it with 2000 (main's n) as its argument.
  REQUIRE(s.process.run_to(unnamed[0], 2000));
}
