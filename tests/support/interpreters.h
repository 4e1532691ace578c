// Which CPython the interpreter tests record. ctest runs them once for every CPython 3.11-3.14
// that CMake found on the machine (tests/CMakeLists.txt), passing the interpreter's path and
// version in the environment; run by hand, they use the PYTHON the build names.
#pragma once

#include <cstdlib>
#include <string>

namespace test {

/// The python3 to record: $REWIND_TEST_PYTHON, else the PYTHON macro (Debian's python3).
inline std::string python() {
  const char* p = std::getenv("REWIND_TEST_PYTHON");
  return p && *p ? p : PYTHON;
}

/// The version ("3.12.1") that interpreter reports, when ctest named it
/// ($REWIND_TEST_PYTHON_VERSION); empty otherwise.
inline std::string python_version() {
  const char* v = std::getenv("REWIND_TEST_PYTHON_VERSION");
  return v ? v : "";
}

}  // namespace test
