#include "insn.h"

namespace rwd {

size_t rep_string_insn_length(const uint8_t* code, size_t n) {
  bool rep = false;
  size_t i = 0;
  for (; i < n && i < 15; ++i) {
    uint8_t b = code[i];
    if (b == 0xf2 || b == 0xf3) {
      rep = true;
    } else if (b == 0xf0 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 ||
               b == 0x65 || b == 0x66 || b == 0x67 || (b >= 0x40 && b <= 0x4f)) {
      // other legacy prefixes and REX
    } else {
      break;
    }
  }
  if (!rep || i >= n) return 0;
  switch (code[i]) {
    case 0xa4:
    case 0xa5:
    case 0xa6:
    case 0xa7:
    case 0xaa:
    case 0xab:
    case 0xac:
    case 0xad:
    case 0xae:
    case 0xaf:
    case 0x6c:
    case 0x6d:
    case 0x6e:
    case 0x6f:
      return i + 1;
    default:
      return 0;
  }
}

}  // namespace rwd
