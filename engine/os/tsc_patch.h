// Where the CPU runs rdtsc for the program even under PR_SET_TSC (a paravirtualised guest,
// such as a PVM one, whose user code the host runs), rewind replaces each rdtsc and rdtscp
// in the code a recorded or replayed process maps by an instruction that faults the same
// way (rdtsc_sites.h), so that it is recorded and replayed as a trapped rdtsc is.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace rwd {

/// Whether rdtsc traps under PR_SET_TSC with PR_TSC_SIGSEGV (prctl(2)) on this machine:
/// probed once, in a forked child that sets the mode and runs rdtsc. REWIND_PATCH_TSC=1
/// makes it false (rewind then patches even where the CPU traps: for tests), =0 true.
bool rdtsc_traps();

/// Where rdtsc does not trap (rdtsc_traps): replaces the rdtsc and rdtscp instructions of
/// the file mappings with execute permission of stopped task `tid`'s process that overlap
/// [lo, hi) by their faulting stand-ins (rdtsc_sites.h). Bytes that are no longer the
/// file's instruction (already replaced, or changed by the program) are left alone. Returns
/// how many it replaced; 0 where rdtsc traps. Throws SystemError when the memory cannot be
/// written.
size_t patch_tsc_reads(pid_t tid, uint64_t lo = 0, uint64_t hi = UINT64_MAX);

/// Puts the original instructions back into `bytes`, read from process `pid` at `addr`,
/// where patch_tsc_reads replaced them: what a debugger shows is the program's code.
void unpatch_tsc_view(pid_t pid, uint64_t addr, std::vector<uint8_t>& bytes);

}  // namespace rwd
