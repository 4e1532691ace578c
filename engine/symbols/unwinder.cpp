#include "engine/symbols/unwinder.h"

#include <libunwind.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "engine/os/proc.h"
#include "engine/symbols/page_cache.h"
#include "preload/rewind_preload_abi.h"

// Exported by libunwind (libunwind-ptrace's own find_proc_info calls it) but not declared
// in its public headers: looks `ip` up in a binary-search table such as .eh_frame_hdr's.
extern "C" int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip,
                                                  unw_dyn_info_t* di, unw_proc_info_t* pi,
                                                  int need_unwind_info, void* arg);

namespace rwd {

FrameRegisters frame_registers(const Registers& r) {
  FrameRegisters f;
  const uint64_t v[FrameRegisters::kCount] = {r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi,
                                              r.rbp, r.rsp, r.r8,  r.r9,  r.r10, r.r11,
                                              r.r12, r.r13, r.r14, r.r15, r.rip};
  for (int i = 0; i < FrameRegisters::kCount; ++i) f.set(i, v[i]);
  return f;
}

namespace {

/// What the accessors read through, with a page cache (a timeline read is a round trip).
struct UnwindContext {
  Target& target;
  const ModuleList& modules;
  FrameRegisters regs;
  PageCache pages{target};

  bool read(uint64_t addr, void* out, size_t n) { return pages.read(addr, out, n); }
};

UnwindContext& ctx(void* arg) {
  return *static_cast<UnwindContext*>(arg);
}

int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t* pi, int need_info,
                   void* arg) {
  UnwindContext& c = ctx(arg);
  const Module* m = c.modules.module_at(ip);
  if (!m || !m->elf().eh_frame_hdr_vaddr()) return -UNW_ENOINFO;
  uint64_t hdr = m->to_runtime(m->elf().eh_frame_hdr_vaddr());
  uint8_t h[12];
  // .eh_frame_hdr (LSB 5.0, "Exception Frame Header"): version 1, then the encodings of
  // eh_frame_ptr, fde_count and the table; only the usual ones are supported.
  if (!c.read(hdr, h, sizeof h) || h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b) return -UNW_ENOINFO;
  uint32_t fde_count;
  memcpy(&fde_count, h + 8, 4);
  unw_dyn_info_t di;
  memset(&di, 0, sizeof di);
  di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
  di.start_ip = m->to_runtime(m->elf().text_lo());
  di.end_ip = m->to_runtime(m->elf().text_hi());
  di.u.rti.segbase = hdr;
  di.u.rti.table_data = hdr + 12;
  di.u.rti.table_len = fde_count * 8 / sizeof(unw_word_t);
  return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_info, arg);
}

void put_unwind_info(unw_addr_space_t, unw_proc_info_t* pi, void*) {
  free(pi->unwind_info);  // allocated by dwarf_search_unwind_table, as libunwind-ptrace frees
  pi->unwind_info = nullptr;
}

int get_dyn_info_list_addr(unw_addr_space_t, unw_word_t*, void*) {
  return -UNW_ENOINFO;
}

int access_mem(unw_addr_space_t, unw_word_t addr, unw_word_t* val, int write, void* arg) {
  if (write) return -UNW_EINVAL;
  return ctx(arg).read(addr, val, sizeof *val) ? 0 : -UNW_EINVAL;
}

int access_reg(unw_addr_space_t, unw_regnum_t reg, unw_word_t* val, int write, void* arg) {
  UnwindContext& c = ctx(arg);
  if (write || !c.regs.has(reg)) return -UNW_EBADREG;
  *val = c.regs.value[size_t(reg)];
  return 0;
}

int access_fpreg(unw_addr_space_t, unw_regnum_t, unw_fpreg_t*, int, void*) {
  return -UNW_EBADREG;
}

int resume(unw_addr_space_t, unw_cursor_t*, void*) {
  return -UNW_EINVAL;
}

int get_proc_name(unw_addr_space_t, unw_word_t ip, char* buf, size_t len, unw_word_t* off,
                  void* arg) {
  const Module* m = ctx(arg).modules.module_at(ip);
  const Symbol* s = m ? m->function_at(m->to_link(ip)) : nullptr;
  if (!s || len == 0) return -UNW_ENOINFO;
  snprintf(buf, len, "%s", s->name.c_str());
  *off = m->to_link(ip) - s->addr;
  return 0;
}

unw_accessors_t accessors = {find_proc_info, put_unwind_info, get_dyn_info_list_addr,
                             access_mem,     access_reg,      access_fpreg,
                             resume,         get_proc_name};

/// One address space for all unwinds (libunwind caches per address space; we turn caching
/// off because memory changes between stops).
unw_addr_space_t address_space() {
  static unw_addr_space_t as = [] {
    unw_addr_space_t a = unw_create_addr_space(&accessors, 0);
    unw_set_caching_policy(a, UNW_CACHE_NONE);
    return a;
  }();
  return as;
}

/// The library's code range and stub area, if `m` is librewind_preload.so.
struct PreloadLayout {
  uint64_t lo = 0, hi = 0;            ///< runtime range of its text
  uint64_t stubs = 0, stubs_end = 0;  ///< runtime range of rwd_stub_area
};

std::optional<PreloadLayout> preload_layout(const Module* m) {
  if (!m || !is_preload_library(m->path())) return std::nullopt;
  auto area = m->symbols().lookup("rwd_stub_area");  // sized: its symbol covers the stubs
  if (area.empty() || area[0]->size == 0) return std::nullopt;
  PreloadLayout l;
  l.lo = m->to_runtime(m->elf().text_lo());
  l.hi = m->to_runtime(m->elf().text_hi());
  l.stubs = m->to_runtime(area[0]->addr);
  l.stubs_end = l.stubs + area[0]->size;
  return l;
}

/// The address of the `syscall` instruction whose stub holds `pc`, when `pc` lies in the stub
/// area of librewind_preload.so (laid out as `l`; the site is kept in the stub at
/// RWD_STUB_SITE_OFFSET).
std::optional<uint64_t> stub_site(UnwindContext& c, const PreloadLayout& l, uint64_t pc) {
  if (pc < l.stubs || pc >= l.stubs_end) return std::nullopt;
  uint64_t stub = l.stubs + (pc - l.stubs) / RWD_STUB_SIZE * RWD_STUB_SIZE, site = 0;
  if (!c.read(stub + RWD_STUB_SITE_OFFSET, &site, sizeof site) || !site) return std::nullopt;
  return site;
}

/// When `f` (reached by a return) is a syscall site's stub in librewind_preload.so (laid out
/// as `l`), returns the frame of the program at that site, as a stop at the site's syscall
/// would show it: pc just after the `syscall` instruction, rsp as it was before the stub
/// lowered it, the callee-saved registers as unwound (rewind_preload_abi.h, RWD_STUB_*).
std::optional<PhysicalFrame> frame_at_site(UnwindContext& c, const PreloadLayout& l,
                                           const PhysicalFrame& f) {
  std::optional<uint64_t> site = stub_site(c, l, f.pc);
  if (!site) return std::nullopt;
  PhysicalFrame p;
  p.regs = f.regs;
  p.pc = *site + 2;
  p.regs.set(16, p.pc);
  p.regs.set(UNW_X86_64_RSP, f.regs.value[UNW_X86_64_RSP] + RWD_STUB_RED_ZONE);
  return p;
}

/// When the task stands in a syscall site's stub itself (its `syscall` for clone, fork or
/// rt_sigreturn, or any other of its instructions: the stubs have no unwind information),
/// the registers of the program at that site, as frame_at_site() shows them. Only the
/// `call rwd_entry` and the `lea 0x80(%rsp),%rsp` after it run with rsp lowered below the
/// red zone (preload/patch.c, put_entry_call).
std::optional<FrameRegisters> stopped_in_stub(UnwindContext& c, const PreloadLayout& l) {
  uint64_t pc = c.regs.value[16];
  std::optional<uint64_t> site = stub_site(c, l, pc);
  if (!site) return std::nullopt;
  static const uint8_t kCall = 0xe8;
  static const uint8_t kRaise[8] = {0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0};
  uint8_t code[8] = {};
  bool lowered = c.read(pc, code, sizeof code) &&
                 (code[0] == kCall || std::memcmp(code, kRaise, sizeof kRaise) == 0);
  FrameRegisters r = c.regs;
  r.set(16, *site + 2);
  if (lowered) r.set(UNW_X86_64_RSP, r.value[UNW_X86_64_RSP] + RWD_STUB_RED_ZONE);
  return r;
}

}  // namespace

std::vector<PhysicalFrame> unwind_stack(Target& target, const ModuleList& modules, pid_t tid,
                                        size_t max_frames) {
  std::vector<PhysicalFrame> frames;
  UnwindContext c{target, modules, frame_registers(target.registers(tid))};
  if (auto l = preload_layout(modules.module_at(c.regs.value[16])))
    if (auto site = stopped_in_stub(c, *l)) c.regs = *site;
  unw_cursor_t cursor;
  if (unw_init_remote(&cursor, address_space(), &c) != 0) return frames;
  PhysicalFrame f;
  f.pc = c.regs.value[16];
  f.regs = c.regs;
  frames.push_back(f);
  static const int kSaved[] = {UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12,
                               UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15};
  while (frames.size() < max_frames) {
    bool was_signal_frame = unw_is_signal_frame(&cursor) > 0;
    if (unw_step(&cursor) <= 0) break;
    PhysicalFrame next;
    unw_word_t v = 0;
    unw_get_reg(&cursor, UNW_REG_IP, &v);
    next.pc = v;
    unw_get_reg(&cursor, UNW_REG_SP, &v);
    next.regs.set(UNW_X86_64_RSP, v);
    next.regs.set(16, next.pc);
    for (int r : kSaved)
      if (unw_get_reg(&cursor, r, &v) == 0) next.regs.set(r, v);
    if (next.pc == 0) break;
    PhysicalFrame& prev = frames.back();
    prev.cfa = next.regs.value[UNW_X86_64_RSP];
    if (next.regs.value[UNW_X86_64_RSP] < prev.regs.value[UNW_X86_64_RSP]) break;  // a loop
    next.return_address = !was_signal_frame;  // after a signal frame: interrupted, not called
    auto l = preload_layout(c.modules.module_at(next.pc));
    if (auto site = l ? frame_at_site(c, *l, next) : std::nullopt) {
      // Out of librewind_preload.so through a patched syscall site: its frames are rewind's,
      // not the program's. The program stands at the site; unwind on from there.
      while (!frames.empty() && frames.back().pc >= l->lo && frames.back().pc < l->hi)
        frames.pop_back();
      if (!frames.empty()) frames.back().cfa = site->regs.value[UNW_X86_64_RSP];
      c.regs = site->regs;
      if (unw_init_remote(&cursor, address_space(), &c) != 0) break;
      frames.push_back(*site);
      continue;
    }
    frames.push_back(next);
  }
  return frames;
}

std::optional<std::pair<uint64_t, uint64_t>> preload_code(const ModuleList& modules) {
  for (const auto& m : modules.modules())
    if (auto l = preload_layout(m.get())) return std::make_pair(l->lo, l->hi);
  return std::nullopt;
}

std::optional<std::pair<uint64_t, uint64_t>> unwind_table_range(Target& target,
                                                                const ModuleList& modules,
                                                                uint64_t ip) {
  UnwindContext c{target, modules, {}};
  unw_proc_info_t pi;
  memset(&pi, 0, sizeof pi);
  if (find_proc_info(address_space(), ip, &pi, 0, &c) != 0) return std::nullopt;
  put_unwind_info(address_space(), &pi, &c);
  if (pi.start_ip >= pi.end_ip || ip < pi.start_ip || ip >= pi.end_ip) return std::nullopt;
  return std::make_pair(uint64_t(pi.start_ip), uint64_t(pi.end_ip));
}

}  // namespace rwd
