// Test helper: the line number of a marker in a test program's source, so tests name lines
// by their text rather than by numbers that move when the program is edited.
#pragma once

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <string>

namespace test {

/// 1-based number of the first line of `source` containing `marker`; fails the test when
/// there is none.
inline uint32_t line_of(const std::string& source, const std::string& marker) {
  std::ifstream in(source);
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n)
    if (line.find(marker) != std::string::npos) return n;
  FAIL("marker not found in " << source << ": " << marker);
  return 0;
}

}  // namespace test
