// A library with an rdtsc, which tsc_reads loads with dlopen: its code is mapped by mmap
// after the program started, where rewind must replace the instruction too (insn_patch.h).
#include <stdint.h>
#include <x86intrin.h>

uint64_t tsc_lib_read(void) {
  return __rdtsc();
}
