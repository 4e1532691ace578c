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

/// Renames every function symbol of process `tid`'s vDSO (its "[vdso]" mapping in
/// /proc/TID/maps) by writing 'X' over the first character of its name in .dynstr (names
/// merged into a longer one's tail are renamed too): lookups by name, with or without the
/// "__vdso_" prefix, fail. Returns the number of symbols renamed; 0 without a vDSO or with
/// an image it cannot parse (left as it is). Throws SystemError when the memory cannot be
/// read or written.
int hide_vdso_symbols(pid_t tid);

}  // namespace rwd
