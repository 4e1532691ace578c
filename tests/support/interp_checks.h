// What every read of an interpreter's stack must give, at any point of a recording (the
// Python and R tests that read the stack at every event and between events).
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "engine/interp/interp_frame.h"

namespace test {

/// Checks each frame of `stack`: readable (a function name) or marked unavailable, and, in
/// `script`, on a line from 1 to `lines`. `unknown_line_ok`: a script frame may have line 0
/// (R's innermost byte-code frame, whose pc libR keeps in unexported globals).
inline void check_frames(const std::vector<rwd::InterpFrame>& stack, const std::string& script,
                         int lines, bool unknown_line_ok) {
  for (const rwd::InterpFrame& f : stack) {
    CHECK((!f.error.empty() || !f.function.empty()));
    if (f.file != script || (unknown_line_ok && f.line == 0)) continue;
    CHECK(f.line >= 1);
    CHECK(f.line <= lines);
  }
}

}  // namespace test
