// Test and benchmark helper: the address of a symbol in a (non-PIE) program, read with nm(1)
// from binutils. Not part of rewind itself (the symbol reader of engine/symbols is).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace rwd::test {

/// The value nm(1) prints for symbol `name` when run as `command` (its output's lines
/// "VALUE TYPE NAME"; a version suffix "@..." of a dynamic symbol is not part of its name);
/// 0 if absent or if nm cannot run.
inline uint64_t nm_value(const std::string& command, const char* name) {
  FILE* p = popen(command.c_str(), "r");
  if (!p) return 0;
  char line[512];
  uint64_t addr = 0;
  while (fgets(line, sizeof line, p)) {
    unsigned long long a;
    char type, sym[400];
    if (sscanf(line, "%llx %c %399s", &a, &type, sym) != 3) continue;
    if (char* at = strchr(sym, '@')) *at = 0;
    if (strcmp(sym, name) == 0) addr = a;
  }
  pclose(p);
  return addr;
}

/// Address of symbol `name` in the executable `exe` as nm prints it; 0 if absent or if nm
/// cannot run.
inline uint64_t nm_symbol(const std::string& exe, const char* name) {
  return nm_value("nm " + exe, name);
}

/// Value of dynamic symbol `name` (any version: `write@@GLIBC_2.2.5` is `write`) in the shared
/// library `file`, as `nm -D` prints it (its address relative to the library's load base);
/// 0 if absent or if nm cannot run.
inline uint64_t nm_dynamic_symbol(const std::string& file, const char* name) {
  return nm_value("nm -D --defined-only " + file, name);
}

}  // namespace rwd::test
