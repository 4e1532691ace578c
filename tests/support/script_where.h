// Where a task's script code is, as the script line step tests compare it: stack depth,
// innermost function and its line (tests/interp/python_step_test.cpp, r_step_test.cpp).
#pragma once

#include <ostream>
#include <string>

namespace test {

/// Where the task's script code is: (depth, innermost function, its line).
struct Where {
  size_t depth = 0;
  std::string function;
  int line = 0;
  bool operator==(const Where& o) const {
    return depth == o.depth && function == o.function && line == o.line;
  }
};

inline std::ostream& operator<<(std::ostream& os, const Where& w) {
  return os << w.function << ":" << w.line << " (depth " << w.depth << ")";
}

}  // namespace test
