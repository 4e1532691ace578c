// Capstone loaded on first use (capstone_api.h).
#include "engine/arch/capstone_api.h"

#include <string>

#include "engine/os/lazy_library.h"

namespace rwd::capstone {

namespace {

LazyLibrary& library() {
  static LazyLibrary lib("libcapstone.so." + std::to_string(CS_API_MAJOR),
                         "the x86-64 disassembler; package libcapstone4");
  return lib;
}

}  // namespace

// Each function resolves its capstone counterpart once (a function-local static: thread-safe).
#define RWD_CAPSTONE(fn) static auto* const real = library().function<decltype(::fn)>(#fn)

cs_err open(cs_arch arch, cs_mode mode, csh* handle) {
  RWD_CAPSTONE(cs_open);
  return real(arch, mode, handle);
}

cs_err option(csh handle, cs_opt_type type, size_t value) {
  RWD_CAPSTONE(cs_option);
  return real(handle, type, value);
}

cs_err close(csh* handle) {
  RWD_CAPSTONE(cs_close);
  return real(handle);
}

cs_insn* malloc(csh handle) {
  RWD_CAPSTONE(cs_malloc);
  return real(handle);
}

void free(cs_insn* insn, size_t count) {
  RWD_CAPSTONE(cs_free);
  real(insn, count);
}

bool disasm_iter(csh handle, const uint8_t** code, size_t* size, uint64_t* address, cs_insn* insn) {
  RWD_CAPSTONE(cs_disasm_iter);
  return real(handle, code, size, address, insn);
}

bool insn_group(csh handle, const cs_insn* insn, unsigned int group_id) {
  RWD_CAPSTONE(cs_insn_group);
  return real(handle, insn, group_id);
}

cs_err regs_access(csh handle, const cs_insn* insn, cs_regs regs_read, uint8_t* read_count,
                   cs_regs regs_write, uint8_t* write_count) {
  RWD_CAPSTONE(cs_regs_access);
  return real(handle, insn, regs_read, read_count, regs_write, write_count);
}

#undef RWD_CAPSTONE

}  // namespace rwd::capstone
