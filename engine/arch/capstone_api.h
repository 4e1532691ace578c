// The capstone functions rewind calls, loaded on first use (engine/os/lazy_library.h).
//
// Debian's capstone is built for every architecture it supports: 77,000 relocations, about
// 6-9 ms of page faults at the start of every process linking it on the development VM. Most
// `rewind` commands never decode an instruction, so rewind does not link it: each function
// below opens libcapstone.so.<CS_API_MAJOR> the first time any of them is called and then
// calls the library's function of the same name (the capstone 4 API, capstone.h). They throw
// Error when the library cannot be loaded.
#pragma once

#include <capstone/capstone.h>

namespace rwd::capstone {

/// cs_open: a decoder handle for `arch` and `mode`.
cs_err open(cs_arch arch, cs_mode mode, csh* handle);
/// cs_option: set a decoder option (CS_OPT_DETAIL, CS_OPT_SYNTAX...).
cs_err option(csh handle, cs_opt_type type, size_t value);
/// cs_close: free a decoder handle.
cs_err close(csh* handle);
/// cs_malloc: one instruction's storage for disasm_iter.
cs_insn* malloc(csh handle);
/// cs_free: free `count` instructions from malloc.
void free(cs_insn* insn, size_t count);
/// cs_disasm_iter: decode one instruction at *code (*size bytes left, at address *address),
/// advancing all three; false where the bytes do not decode.
bool disasm_iter(csh handle, const uint8_t** code, size_t* size, uint64_t* address, cs_insn* insn);
/// cs_insn_group: whether `insn` belongs to group `group_id` (CS_GRP_JUMP...); needs details.
bool insn_group(csh handle, const cs_insn* insn, unsigned int group_id);
/// cs_regs_access: the registers `insn` reads and writes, implicit ones included.
cs_err regs_access(csh handle, const cs_insn* insn, cs_regs regs_read, uint8_t* read_count,
                   cs_regs regs_write, uint8_t* write_count);

}  // namespace rwd::capstone
