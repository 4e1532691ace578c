// Test helper: records a program with `rewind record` once per test run and hands out the
// trace directory (recording is the slow part; the tests only read the trace).
#pragma once

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

namespace test {

/// The trace of `program` recorded by the rewind binary `rewind` (its output discarded),
/// recorded on the first call for that program, and again when a test has deleted it since.
/// Fails the test when recording fails.
inline const std::string& recorded_trace(const std::string& rewind, const std::string& program) {
  static std::map<std::string, std::string> traces;
  auto it = traces.find(program);
  if (it != traces.end() && std::filesystem::exists(it->second)) return it->second;
  char tmpl[] = "/tmp/rewind-test-trace.XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string cmd = rewind + " record -o " + dir + "/trace " + program + " >/dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return traces[program] = dir + "/trace";
}

}  // namespace test
