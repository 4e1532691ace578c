// The vDSO of a recorded or replayed process, kept mapped but with no function a lookup can
// find: glibc and other runtimes that look its functions up by name (clock_gettime,
// gettimeofday, time, getcpu, getrandom) find none and make the real, recorded syscalls,
// while a program that walks the vDSO's ELF image (getauxval(AT_SYSINFO_EHDR)) still finds a
// valid one (vdso(7)). Recording and replay rename the same bytes, so the image is the same in
// both.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace rwd {

/// The start of process `tid`'s "[vdso]" mapping (/proc/TID/maps), 0 when it has none.
uint64_t vdso_base(pid_t tid);

/// Renames every function symbol of the vDSO mapped at `base` in process `tid` by writing 'X'
/// over the first character of its name in .dynstr (names merged into a longer one's tail are
/// renamed too): lookups by name, with or without the "__vdso_" prefix, fail. Returns the
/// number of symbols renamed. Throws SystemError when the memory cannot be read or written;
/// an image it cannot parse is left as it is (0).
int hide_vdso_symbols(pid_t tid, uint64_t base);

}  // namespace rwd
