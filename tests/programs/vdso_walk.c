// Walks the vDSO's ELF image as some runtimes do (getauxval(AT_SYSINFO_EHDR), its dynamic
// symbols), for programs.sh (vdso): under rewind the image is there and valid, with its
// functions renamed so that nothing calls them (engine/os/vdso_symbols.h); natively
// __vdso_clock_gettime is found. Arguments are ignored.
#include <elf.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

int main(void) {
  const Elf64_Ehdr* eh = (const Elf64_Ehdr*)getauxval(AT_SYSINFO_EHDR);
  if (!eh) {
    puts("no vDSO");
    return 1;
  }
  const Elf64_Shdr* sh = (const Elf64_Shdr*)((const char*)eh + eh->e_shoff);
  int funcs = 0, clock = 0;
  for (int i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_DYNSYM) continue;
    const Elf64_Sym* sym = (const Elf64_Sym*)((const char*)eh + sh[i].sh_offset);
    const char* names = (const char*)eh + sh[sh[i].sh_link].sh_offset;
    for (size_t j = 0; j < sh[i].sh_size / sizeof *sym; j++) {
      if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC) continue;
      funcs++;
      clock |= strcmp(names + sym[j].st_name, "__vdso_clock_gettime") == 0;
    }
  }
  struct timespec ts;
  int r = clock_gettime(CLOCK_MONOTONIC, &ts);
  printf("vDSO: ELF %s, %s functions, __vdso_clock_gettime %s; clock_gettime %d\n",
         memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 ? "image" : "garbage", funcs > 0 ? "some" : "no",
         clock ? "found" : "not found", r);
  return 0;
}
