#include "insn.h"

#include <vector>

#include "engine/os/tracee_memory.h"

namespace rwd {

size_t insn_prefix_length(const uint8_t* code, size_t n) {
  size_t i = 0;
  for (; i < n && i < 15; ++i) {
    uint8_t b = code[i];
    if (!(b == 0xf2 || b == 0xf3 || b == 0xf0 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 ||
          b == 0x64 || b == 0x65 || b == 0x66 || b == 0x67 || (b >= 0x40 && b <= 0x4f)))
      break;
  }
  return i;
}

const char* syscall_insn_name(const uint8_t* code, size_t n) {
  if (n < 2) return nullptr;
  if (code[0] == 0x0f && code[1] == 0x05) return "syscall";
  if (code[0] == 0x0f && code[1] == 0x34) return "sysenter";
  if (code[0] == 0xcd && code[1] == 0x80) return "int $0x80";
  return nullptr;
}

size_t rep_string_insn_length(const uint8_t* code, size_t n) {
  const size_t i = insn_prefix_length(code, n);
  bool rep = false;
  for (size_t k = 0; k < i; ++k) rep = rep || code[k] == 0xf2 || code[k] == 0xf3;
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

size_t rep_insn_at(pid_t tid, uint64_t rip) {
  std::vector<uint8_t> code = read_memory(tid, rip, 15);
  return rep_string_insn_length(code.data(), code.size());
}

}  // namespace rwd
