#include "registers.h"

#include <cstring>
#include <string_view>

namespace rwd {

namespace {
// Field order of struct user_regs_struct in <sys/user.h> (x86-64).
constexpr const char* kNames[kRegisterCount] = {
    "r15",    "r14", "r13", "r12",     "rbp",     "rbx", "r11",      "r10", "r9",
    "r8",     "rax", "rcx", "rdx",     "rsi",     "rdi", "orig_rax", "rip", "cs",
    "eflags", "rsp", "ss",  "fs_base", "gs_base", "ds",  "es",       "fs",  "gs"};
static_assert(sizeof(Registers) == 27 * 8);
}  // namespace

const char* register_name(size_t i) {
  return i < kRegisterCount ? kNames[i] : "?";
}

uint64_t register_value(const Registers& r, size_t i) {
  uint64_t v = 0;
  if (i < kRegisterCount) std::memcpy(&v, reinterpret_cast<const char*>(&r) + i * 8, 8);
  return v;
}

bool registers_equal(const Registers& a, const Registers& b) {
  Registers x = a, y = b;
  x.eflags &= ~kTransientFlags;
  y.eflags &= ~kTransientFlags;
  return std::memcmp(&x, &y, sizeof x) == 0;
}

std::optional<std::string> first_register_difference(const Registers& recorded,
                                                     const Registers& replay) {
  for (size_t i = 0; i < kRegisterCount; ++i) {
    uint64_t a = register_value(recorded, i), b = register_value(replay, i);
    if (std::string_view(kNames[i]) == "eflags") {
      a &= ~kTransientFlags;
      b &= ~kTransientFlags;
    }
    if (a != b) return std::string(kNames[i]) + ": recorded " + hex(a) + ", replay " + hex(b);
  }
  return std::nullopt;
}

std::string hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace rwd
