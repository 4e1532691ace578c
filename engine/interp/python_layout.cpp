#include "engine/interp/python_layout.h"

namespace rwd {

namespace {

// clang-format off
const PythonLayout kLayouts[] = {
  // minor rt.ih ts.h tsnx cfr cfcur tscur ntid f.code f.prev f.instr f.entry f.owner f.lp cstack
  //   co.argc co.first co.nlp co.names co.kinds co.file co.qual co.lt co.code ascii compact tag
  {11,  40,   16,   8,  56,   8,   -1,  160,  32,  48,  56,  68,  69,  72, -1,
        56,  72,  76,  96, 104, 112, 128, 136, 184, 48, 72, false},
  {12,  40,   72,   8,  56,   0,   -1,  144,   0,   8,  56,  -1,  70,  72,  3,
        52,  68,  72,  96, 104, 112, 128, 136, 192, 40, 56, true},
  {13, 632, 7344,   8,  -1,  -1,   72,  160,   0,   8,  56,  -1,  70,  72,  3,
        52,  68,  72,  96, 104, 112, 128, 136, 200, 40, 56, true},
};
// clang-format on

}  // namespace

const PythonLayout* python_layout(int minor) {
  for (const PythonLayout& l : kLayouts)
    if (l.minor == minor) return &l;
  return nullptr;
}

}  // namespace rwd
