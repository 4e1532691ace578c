/* Patching libc's syscall sites (preload/README.md "Patching"). glibc makes most syscalls,
 * its internal ones included, in one of two shapes, both patched here:
 * - `syscall` followed by a compare of the result with the error range (kSitePatterns: the
 *   64-bit and the 32-bit form). The site becomes `jmp stub` (5 bytes) and a nop over the
 *   rest. The site's stub, written into rwd_stub_area, makes the few syscalls that must run
 *   where they were (clone, fork, vfork, clone3: the child returns on another stack;
 *   rt_sigreturn: reads the stack) with its own `syscall` instruction (traced), sends every
 *   other one to rwd_entry below the red zone, then runs the displaced compare and jumps
 *   back after the site.
 * - `mov $NR, %eax; syscall` for a syscall the library may buffer (getpid, geteuid,
 *   clock_gettime, posix_fadvise...: a `ret` or a test follows, too short to hold a jump).
 *   Only the 5-byte `mov` becomes `jmp stub`; the `syscall` stays, so that code jumping to it
 *   directly with another number in eax still makes that syscall (traced). The stub sets eax,
 *   calls rwd_entry and jumps back after the `syscall`. */
#define _GNU_SOURCE
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "preload.h"

enum { kMaxSiteLen = 8, kStubLen = RWD_STUB_SIZE, kMaxSites = 4096, kMaxFound = 8192 };
/* A `mov $NR, %eax` (5 bytes) before a `syscall`; kMovSite marks such a site in lens[]. */
enum { kMovLen = 5, kMovSite = 0xff };

/* The syscall sites patched: `syscall` and the compare after it (which the stub runs). */
static const struct {
  unsigned char len;
  unsigned char bytes[kMaxSiteLen];
} kSitePatterns[] = {
    {8, {0x0f, 0x05, 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff}}, /* cmp $-4096, %rax */
    {8, {0x0f, 0x05, 0x48, 0x3d, 0x01, 0xf0, 0xff, 0xff}}, /* cmp $-4095, %rax */
    {7, {0x0f, 0x05, 0x3d, 0x00, 0xf0, 0xff, 0xff}},       /* cmp $0xfffff000, %eax */
    {7, {0x0f, 0x05, 0x3d, 0x01, 0xf0, 0xff, 0xff}},       /* cmp $0xfffff001, %eax */
};

/* Multi-byte nops (Intel SDM vol. 2, NOP) that fill a site after its 5-byte jump. */
static const unsigned char kNop2[] = {0x66, 0x90}, kNop3[] = {0x0f, 0x1f, 0x00};

struct text_range {
  uintptr_t lo, hi;
};

static int find_libc(struct dl_phdr_info* info, size_t size, void* arg) {
  (void)size;
  struct text_range* t = arg;
  const char* name = info->dlpi_name;
  const char* slash = name ? strrchr(name, '/') : 0;
  if (!slash || strncmp(slash + 1, "libc.so.", 8) != 0) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* p = &info->dlpi_phdr[i];
    if (p->p_type == PT_LOAD && (p->p_flags & PF_X)) {
      t->lo = info->dlpi_addr + p->p_vaddr;
      t->hi = t->lo + p->p_memsz;
      return 1;
    }
  }
  return 0;
}

/* The length of the syscall site at p (a kSitePatterns entry), or 0. p has kMaxSiteLen
 * readable bytes. */
static int site_len(const unsigned char* p) {
  for (unsigned i = 0; i < sizeof kSitePatterns / sizeof kSitePatterns[0]; ++i) {
    int n = kSitePatterns[i].len, k = 0;
    while (k < n && p[k] == kSitePatterns[i].bytes[k]) ++k;
    if (k == n) return n;
  }
  return 0;
}

/* Writes to out[0..max) the addresses in [a, lim) that hold the bytes of `syscall` (0f 05),
 * in order; returns how many (at most max). The byte after lim - 1 must be readable.
 * libc's 1.5 MB of text is scanned at every exec, so this goes 8 bytes at a time: a word is
 * looked at byte by byte only when one of its bytes may be 0x0f with 0x05 after it (the
 * zero-byte test of each byte of word ^ pattern; it can flag a byte above a true match too,
 * never miss one). One call and no stack writes in the loop (checked in the disassembly when
 * this was written): a debugger's watchpoint on a stack slot must not fire at every word,
 * or a reverse-continue to an earlier write would single-step through the whole scan. */
typedef uint64_t __attribute__((may_alias)) word_t;
__attribute__((noinline)) static int find_syscalls(uintptr_t a, uintptr_t lim, uintptr_t* out,
                                                   int max) {
  const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
  int n = 0;
  while (a < lim && n < max) {
    if ((a & 7) || a + 16 > lim) {
      const unsigned char* p = (const unsigned char*)a;
      if (p[0] == 0x0f && p[1] == 0x05) out[n++] = a;
      ++a;
      continue;
    }
    uint64_t v = *(const word_t*)a;
    uint64_t x = v ^ (0x0f * ones), y = v ^ (0x05 * ones);
    uint64_t is0f = (x - ones) & ~x & highs, is05 = (y - ones) & ~y & highs;
    uint64_t next05 = (is05 >> 8) | ((uint64_t)(((const unsigned char*)a)[8] == 0x05) << 63);
    if (is0f & next05) {
      for (int i = 0; i < 8 && n < max; ++i) {
        const unsigned char* p = (const unsigned char*)(a + (uintptr_t)i);
        if (p[0] == 0x0f && p[1] == 0x05) out[n++] = a + (uintptr_t)i;
      }
    }
    a += 8;
  }
  return n;
}

static int fits_rel32(uintptr_t from_end, uintptr_t to) {
  long d = (long)(to - from_end);
  return d == (int32_t)d;
}

static void put32(unsigned char* p, uint32_t v) {
  rwd_copy(p, &v, 4);
}

/* Writes, at p, the call into the library that every stub makes: rsp moved below the red
 * zone, `call rwd_entry`, rsp back (lea, so flags stay as they are). Returns the end. */
static unsigned char* put_entry_call(unsigned char* p) {
  static const unsigned char below_red_zone[] = {0x48, 0x8d, 0x64, 0x24, 0x80};
  rwd_copy(p, below_red_zone, 5);
  p += 5;
  p[0] = 0xe8; /* call rwd_entry */
  put32(p + 1, (uint32_t)((uintptr_t)rwd_entry - (uintptr_t)(p + 5)));
  p += 5;
  static const unsigned char back_up[] = {0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0};
  rwd_copy(p, back_up, 8);
  return p + 8;
}

/* Ends the stub at s whose code ends at p: int3 up to RWD_STUB_SITE_OFFSET, then `site`, the
 * address of the syscall instruction the stub stands for (for debuggers' unwinding). */
static void put_stub_site(unsigned char* s, unsigned char* p, uintptr_t site) {
  while (p < s + RWD_STUB_SITE_OFFSET) *p++ = 0xcc;
  rwd_copy(p, &site, sizeof site);
}

/* Writes the stub for the `len`-byte `site` at `s` (kStubLen bytes). */
static void write_stub(unsigned char* s, uintptr_t site, int len) {
  static const struct {
    unsigned char len;
    unsigned char code[5];
  } raw[] = {
      {3, {0x83, 0xf8, SYS_clone}},
      {3, {0x83, 0xf8, SYS_fork}},
      {3, {0x83, 0xf8, SYS_vfork}},
      {3, {0x83, 0xf8, SYS_rt_sigreturn}},
      {5, {0x3d, SYS_clone3 & 0xff, SYS_clone3 >> 8, 0, 0}},
  };
  unsigned char* p = s;
  unsigned char* jumps[5];
  for (int i = 0; i < 5; ++i) {
    rwd_copy(p, raw[i].code, raw[i].len);
    p += raw[i].len;
    p[0] = 0x74; /* je raw */
    jumps[i] = p + 1;
    p += 2;
  }
  p = put_entry_call(p);
  p[0] = 0xeb; /* jmp tail */
  p[1] = 2;
  p += 2;
  for (int i = 0; i < 5; ++i) *jumps[i] = (unsigned char)(p - (jumps[i] + 1));
  p[0] = 0x0f; /* raw: syscall */
  p[1] = 0x05;
  p += 2;
  rwd_copy(p, (const void*)(site + 2), len - 2); /* tail: the displaced cmp */
  p += len - 2;
  p[0] = 0xe9; /* jmp site + len */
  put32(p + 1, (uint32_t)(site + len - (uintptr_t)(p + 5)));
  p += 5;
  put_stub_site(s, p, site);
}

/* The syscall number of `mov $NR, %eax` at p (b8 and a 32-bit immediate below 1024), or -1. */
static long mov_eax_number(const unsigned char* p) {
  if (p[0] != 0xb8 || p[3] != 0 || p[4] != 0 || p[2] > 3) return -1;
  return (long)p[1] | (long)p[2] << 8;
}

/* Syscalls that must run where the program made them (see write_stub). */
static int raw_syscall(long nr) {
  return nr == SYS_clone || nr == SYS_fork || nr == SYS_vfork || nr == SYS_rt_sigreturn ||
         nr == SYS_clone3;
}

/* Writes the stub for the `mov $NR, %eax; syscall` site at `site` (kStubLen bytes at s). */
static void write_mov_stub(unsigned char* s, uintptr_t site) {
  unsigned char* p = s;
  rwd_copy(p, (const void*)site, kMovLen); /* mov $NR, %eax */
  p += kMovLen;
  p = put_entry_call(p);
  uintptr_t after = site + kMovLen + 2; /* past the `syscall` */
  p[0] = 0xe9;                          /* jmp after */
  put32(p + 1, (uint32_t)(after - (uintptr_t)(p + 5)));
  p += 5;
  put_stub_site(s, p, site + kMovLen); /* the `syscall`, as write_stub's */
}

int rwd_patch_libc(void) {
  struct text_range t = {0, 0};
  if (!dl_iterate_phdr(find_libc, &t) || t.hi <= t.lo + kMaxSiteLen) return 0;
  /* Collect the sites first: once libc's text is writable, no libc code can run. */
  static uintptr_t sites[kMaxSites];
  static unsigned char lens[kMaxSites];
  int n = 0;
  uintptr_t stubs = (uintptr_t)rwd_stub_area;
  int capacity = (int)((rwd_stub_area_end - rwd_stub_area) / kStubLen);
  uintptr_t patched_end = t.lo; /* sites never overlap */
  static uintptr_t found[kMaxFound];
  int nfound = find_syscalls(t.lo, t.hi - kMaxSiteLen + 1, found, kMaxFound);
  for (int k = 0; k < nfound && n < capacity && n < kMaxSites; ++k) {
    uintptr_t a = found[k];
    if (a < patched_end) continue; /* inside a site patched already */
    const unsigned char* p = (const unsigned char*)a;
    uintptr_t stub = stubs + (uintptr_t)n * kStubLen;
    int len = site_len(p);
    if (len) {
      if (!fits_rel32(a + 5, stub) || !fits_rel32(stub + kStubLen, a + len)) continue;
      lens[n] = (unsigned char)len;
      sites[n++] = a;
      patched_end = a + (uintptr_t)len;
    } else if (a >= t.lo + kMovLen && a - kMovLen >= patched_end) {
      long nr = mov_eax_number(p - kMovLen);
      if (nr < 0 || !rwd_may_buffer(nr) || raw_syscall(nr)) continue;
      if (!fits_rel32(a - kMovLen + 5, stub) || !fits_rel32(stub + kStubLen, a + 2)) continue;
      lens[n] = kMovSite;
      sites[n++] = a - kMovLen;
      patched_end = a + 2; /* the `syscall` stays */
    }
  }
  if (n == 0) return 0;
  long area = rwd_stub_area_end - rwd_stub_area;
  if (rwd_library_syscall(SYS_mprotect, (long)rwd_stub_area, area, PROT_READ | PROT_WRITE, 0, 0,
                          0) != 0)
    return 0;
  for (int i = 0; i < n; ++i) {
    unsigned char* stub = rwd_stub_area + (long)i * kStubLen;
    if (lens[i] == kMovSite)
      write_mov_stub(stub, sites[i]);
    else
      write_stub(stub, sites[i], lens[i]);
  }
  rwd_library_syscall(SYS_mprotect, (long)rwd_stub_area, area, PROT_READ | PROT_EXEC, 0, 0, 0);
  uintptr_t lo = t.lo & ~4095ul, hi = (t.hi + 4095) & ~4095ul;
  if (rwd_library_syscall(SYS_mprotect, (long)lo, (long)(hi - lo), PROT_READ | PROT_WRITE, 0, 0,
                          0) != 0)
    return 0;
  for (int i = 0; i < n; ++i) {
    unsigned char jump[kMaxSiteLen] = {0xe9};
    uintptr_t stub = stubs + (uintptr_t)i * kStubLen;
    put32(jump + 1, (uint32_t)(stub - (sites[i] + 5)));
    if (lens[i] == kMovSite) { /* the `mov` only: the `syscall` after it stays */
      rwd_copy((void*)sites[i], jump, kMovLen);
      continue;
    }
    if (lens[i] == 7)
      rwd_copy(jump + 5, kNop2, 2);
    else
      rwd_copy(jump + 5, kNop3, 3);
    rwd_copy((void*)sites[i], jump, lens[i]);
  }
  rwd_library_syscall(SYS_mprotect, (long)lo, (long)(hi - lo), PROT_READ | PROT_EXEC, 0, 0, 0);
  return n;
}
