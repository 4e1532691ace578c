#include "engine/symbols/elf_image.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include "engine/errors.h"

namespace rwd {

namespace {

/// Closes the descriptor and ends the Elf handle on scope exit.
struct ElfHandle {
  int fd = -1;
  Elf* elf = nullptr;
  ~ElfHandle() {
    if (elf) elf_end(elf);
    if (fd >= 0) ::close(fd);
  }
};

std::string to_hex(const uint8_t* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

/// Reads the NT_GNU_BUILD_ID note of a SHT_NOTE section, "" if it is another note.
std::string build_id_in(Elf_Data* data) {
  size_t off = 0, name_off, desc_off;
  GElf_Nhdr nhdr;
  while ((off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
    const char* name = static_cast<const char*>(data->d_buf) + name_off;
    if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 && memcmp(name, "GNU", 4) == 0)
      return to_hex(static_cast<const uint8_t*>(data->d_buf) + desc_off, nhdr.n_descsz);
  }
  return "";
}

}  // namespace

std::unique_ptr<ElfImage> ElfImage::open(const std::string& path) {
  elf_version(EV_CURRENT);
  ElfHandle h;
  h.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (h.fd < 0) throw SystemError(path, errno);
  h.elf = elf_begin(h.fd, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr ehdr;
  if (!h.elf || elf_kind(h.elf) != ELF_K_ELF || !gelf_getehdr(h.elf, &ehdr))
    throw Error(path + ": not an ELF file");
  if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != EM_X86_64)
    throw Error(path + ": not an x86-64 ELF file");

  auto img = std::unique_ptr<ElfImage>(new ElfImage);
  img->path_ = path;
  img->relocatable_ = ehdr.e_type == ET_DYN;

  size_t phnum = 0;
  elf_getphdrnum(h.elf, &phnum);
  bool first = true;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(h.elf, int(i), &ph)) continue;
    if (ph.p_type == PT_LOAD) {
      img->loads_.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz});
      if (first) img->first_load_vaddr_ = (ph.p_vaddr - ph.p_offset) & ~uint64_t(0xfff);
      first = false;
      if (ph.p_flags & PF_X) {
        if (img->text_hi_ == 0 || ph.p_vaddr < img->text_lo_) img->text_lo_ = ph.p_vaddr;
        img->text_hi_ = std::max(img->text_hi_, ph.p_vaddr + ph.p_memsz);
      }
    } else if (ph.p_type == PT_GNU_EH_FRAME) {
      img->eh_frame_hdr_vaddr_ = ph.p_vaddr;
      img->eh_frame_hdr_size_ = ph.p_memsz;
    } else if (ph.p_type == PT_DYNAMIC) {
      img->dynamic_vaddr_ = ph.p_vaddr;
    }
  }

  size_t shstrndx = 0;
  elf_getshdrstrndx(h.elf, &shstrndx);
  std::set<std::pair<std::string, uint64_t>> seen;
  for (Elf_Scn* scn = elf_nextscn(h.elf, nullptr); scn; scn = elf_nextscn(h.elf, scn)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char* name = elf_strptr(h.elf, shstrndx, sh.sh_name);
    std::string sname = name ? name : "";
    if (sh.sh_type == SHT_NOTE && img->build_id_.empty()) {
      if (Elf_Data* d = elf_getdata(scn, nullptr)) img->build_id_ = build_id_in(d);
    } else if (sname == ".gnu_debuglink") {
      Elf_Data* d = elf_getdata(scn, nullptr);
      if (d && d->d_size >= 8) {
        const char* p = static_cast<const char*>(d->d_buf);
        DebugLink link;
        link.name.assign(p, strnlen(p, d->d_size));
        size_t crc_off = (link.name.size() + 4) & ~size_t(3);
        if (crc_off + 4 <= d->d_size) memcpy(&link.crc, p + crc_off, 4);
        img->debuglink_ = link;
      }
    } else if (sname == ".debug_info" && sh.sh_type != SHT_NOBITS && sh.sh_size > 0) {
      img->has_debug_info_ = true;
    } else if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
      Elf_Data* d = elf_getdata(scn, nullptr);
      if (!d || sh.sh_entsize == 0) continue;
      size_t count = sh.sh_size / sh.sh_entsize;
      for (size_t i = 1; i < count; ++i) {
        GElf_Sym sym;
        if (!gelf_getsym(d, int(i), &sym)) continue;
        int type = GELF_ST_TYPE(sym.st_info);
        bool fn = type == STT_FUNC || type == STT_GNU_IFUNC;
        if (!fn && type != STT_OBJECT && type != STT_TLS) continue;
        if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
        const char* sn = elf_strptr(h.elf, sh.sh_link, sym.st_name);
        if (!sn || !*sn) continue;
        std::string s = sn;
        if (auto at = s.find('@'); at != std::string::npos) s.resize(at);  // memcpy@@GLIBC_2.14
        if (!seen.emplace(s, sym.st_value).second) continue;
        int bind = GELF_ST_BIND(sym.st_info);
        img->symbols_.push_back(
            {std::move(s), sym.st_value, sym.st_size, fn, bind == STB_GLOBAL || bind == STB_WEAK});
      }
    }
  }
  return img;
}

std::optional<uint32_t> file_crc32(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  uLong crc = crc32(0, nullptr, 0);
  unsigned char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    crc = crc32(crc, buf, uInt(n));
  }
  ::close(fd);
  return uint32_t(crc);
}

std::optional<uint64_t> ElfImage::file_offset(uint64_t vaddr) const {
  for (const Segment& s : loads_)
    if (vaddr >= s.vaddr && vaddr - s.vaddr < s.filesz) return s.offset + (vaddr - s.vaddr);
  return std::nullopt;
}

}  // namespace rwd
