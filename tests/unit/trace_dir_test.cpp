#include "engine/trace/trace_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "engine/errors.h"
#include "test_dir.h"

using namespace rwd;

namespace {
void make_trace(const std::string& dir) {
  ::mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/version") << "rewind trace format 1\n";
}
}  // namespace

TEST_CASE("traces are named NAME-N with N one past the largest") {
  TestDir d;
  CHECK(create_trace_dir(d.path, "ls") == d / "ls-0");
  CHECK(create_trace_dir(d.path, "ls") == d / "ls-1");
  ::mkdir((d / "ls-7").c_str(), 0755);
  ::mkdir((d / "ls-x").c_str(), 0755);
  CHECK(create_trace_dir(d.path, "ls") == d / "ls-8");
  CHECK(create_trace_dir(d.path, "l") == d / "l-0");  // "ls-*" is not "l-*"
}

TEST_CASE("the traces root follows REWIND_TRACE_DIR, then XDG_DATA_HOME") {
  TestDir d;
  setenv("REWIND_TRACE_DIR", (d / "a/b").c_str(), 1);
  CHECK(traces_root() == d / "a/b");
  struct stat st;
  CHECK(::stat((d / "a/b").c_str(), &st) == 0);
  unsetenv("REWIND_TRACE_DIR");
  std::string old_xdg = getenv("XDG_DATA_HOME") ? getenv("XDG_DATA_HOME") : "";
  setenv("XDG_DATA_HOME", d.path.c_str(), 1);
  CHECK(traces_root() == d / "rewind");
  if (old_xdg.empty())
    unsetenv("XDG_DATA_HOME");
  else
    setenv("XDG_DATA_HOME", old_xdg.c_str(), 1);
}

TEST_CASE("latest-trace and name resolution") {
  TestDir d;
  setenv("REWIND_TRACE_DIR", d.path.c_str(), 1);
  CHECK_THROWS_WITH(resolve_trace(""), Catch::Contains("no trace found"));
  make_trace(d / "date-0");
  make_trace(d / "date-1");
  set_latest_trace(d.path, d / "date-0");
  CHECK(resolve_trace("") == d / "date-0");
  set_latest_trace(d.path, d / "date-1");
  CHECK(resolve_trace("") == d / "date-1");
  CHECK(resolve_trace("date-0") == d / "date-0");
  CHECK(resolve_trace(d / "date-0") == d / "date-0");
  CHECK_THROWS_WITH(resolve_trace("nope"), Catch::Contains("no trace named 'nope'"));
  CHECK(list_traces(d.path) == std::vector<std::string>{"date-0", "date-1"});
  unsetenv("REWIND_TRACE_DIR");
}
