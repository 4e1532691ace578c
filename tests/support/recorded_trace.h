// Test helper: records a program with `rewind record` once per test run and hands out the
// trace directory (recording is the slow part; the tests only read the trace).
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>
#include <vector>

namespace test {

/// Temporary directories that are removed, with what they hold, when the test program
/// ends (traces take tens of MB each; test runs must not fill the shared disk).
struct TempDirs {
  std::vector<std::string> dirs;
  ~TempDirs() {
    std::error_code ignored;
    for (const auto& d : dirs) std::filesystem::remove_all(d, ignored);
  }
};

/// A new directory /tmp/`prefix`.XXXXXX (mkdtemp(3)), removed with what it holds when the
/// test program ends. Fails the test when it cannot be made.
inline std::string temp_dir(const std::string& prefix) {
  static TempDirs made;
  std::string tmpl = "/tmp/" + prefix + ".XXXXXX";
  REQUIRE(mkdtemp(tmpl.data()) != nullptr);
  made.dirs.push_back(tmpl);
  return tmpl;
}

/// The trace of `program` recorded by the rewind binary `rewind` (its output discarded),
/// recorded on the first call for that program, and again when a test has deleted it since.
/// The traces are deleted when the test program ends. Fails the test when recording fails or
/// the program's exit status (which `rewind record` exits with) is not `status`.
inline const std::string& recorded_trace(const std::string& rewind, const std::string& program,
                                         int status = 0) {
  static std::map<std::string, std::string> traces;
  static TempDirs made;
  auto it = traces.find(program);
  if (it != traces.end() && std::filesystem::exists(it->second)) return it->second;
  char tmpl[] = "/tmp/rewind-test-trace.XXXXXX";
  std::string dir = mkdtemp(tmpl);
  made.dirs.push_back(dir);
  std::string cmd = rewind + " record -o " + dir + "/trace " + program + " >/dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(rc));
  REQUIRE(WEXITSTATUS(rc) == status);
  return traces[program] = dir + "/trace";
}

}  // namespace test
