#include "vdso_symbols.h"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"

namespace rwd {

int hide_vdso_symbols(pid_t tid) {
  uint64_t base = 0, size = 0;
  for (const ProcMapping& m : read_proc_maps(tid)) {
    if (m.path != "[vdso]") continue;
    base = m.start;
    size = m.end - m.start;
  }
  if (!base) return 0;
  constexpr uint64_t kMaxImage = 1 << 20;
  if (size < sizeof(Elf64_Ehdr) || size > kMaxImage) return 0;
  // The image is mapped whole from its start: file offsets are offsets from `base`.
  std::vector<uint8_t> img = read_memory(tid, base, size);
  if (img.size() != size) return 0;
  Elf64_Ehdr eh;
  std::memcpy(&eh, img.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shoff > size || uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) > size - eh.e_shoff)
    return 0;
  auto section = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, img.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    return sh;
  };
  int renamed = 0;
  // The names are renamed in `img` and written back at once: one write from the first
  // changed byte to the last (the bytes between as read; the task is stopped at its exec).
  uint64_t first = size, last = 0;
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sym = section(i);
    if (sym.sh_type != SHT_DYNSYM || sym.sh_link >= eh.e_shnum) continue;
    Elf64_Shdr str = section(sym.sh_link);
    if (sym.sh_offset > size || sym.sh_size > size - sym.sh_offset || str.sh_offset > size ||
        str.sh_size > size - str.sh_offset)
      return 0;
    for (uint64_t at = 0; at + sizeof(Elf64_Sym) <= sym.sh_size; at += sizeof(Elf64_Sym)) {
      Elf64_Sym s;
      std::memcpy(&s, img.data() + sym.sh_offset + at, sizeof s);
      if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_name == 0 || s.st_name >= str.sh_size)
        continue;
      uint64_t name = str.sh_offset + s.st_name;
      img[name] = 'X';
      first = std::min(first, name);
      last = std::max(last, name + 1);
      ++renamed;
    }
  }
  // The vDSO's pages are read-only: /proc/PID/mem writes them (a private copy for the task).
  if (first < last) TraceeMemFile(tid).write(base + first, img.data() + first, last - first);
  return renamed;
}

}  // namespace rwd
