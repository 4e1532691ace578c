#include <cstring>

#include "engine/arch/registers.h"
#include "engine/interp/interp_frame.h"

namespace rwd {

namespace {

uint64_t symbol_address(const ModuleList& modules, const char* name, bool function) {
  for (const auto& m : modules.modules())
    for (const Symbol* s : m->symbols().lookup(name))
      if (s->function == function) return m->to_runtime(s->addr);
  return 0;
}

}  // namespace

uint64_t data_symbol_address(const ModuleList& modules, const char* name) {
  return symbol_address(modules, name, false);
}

uint64_t function_symbol_address(const ModuleList& modules, const char* name) {
  return symbol_address(modules, name, true);
}

std::vector<uint8_t> InterpMemory::bytes(uint64_t addr, size_t len) {
  if (addr < 4096 || addr + len < addr) throw InterpReadError("bad pointer " + hex(addr));
  std::vector<uint8_t> b(len);
  if (!pages_.read(addr, b.data(), len)) throw InterpReadError("unreadable memory at " + hex(addr));
  return b;
}

uint64_t InterpMemory::u64(uint64_t addr) {
  auto b = bytes(addr, 8);
  uint64_t v;
  std::memcpy(&v, b.data(), 8);
  return v;
}

uint32_t InterpMemory::u32(uint64_t addr) {
  auto b = bytes(addr, 4);
  uint32_t v;
  std::memcpy(&v, b.data(), 4);
  return v;
}

uint8_t InterpMemory::u8(uint64_t addr) {
  return bytes(addr, 1)[0];
}

double InterpMemory::f64(uint64_t addr) {
  auto b = bytes(addr, 8);
  double v;
  std::memcpy(&v, b.data(), 8);
  return v;
}

}  // namespace rwd
