// rewind replaces each cpuid in the code a recorded or replayed process maps by an
// instruction that faults (emulated_insns.h), so that its result is recorded and replayed:
// the CPU here has no CPUID faulting (arch_prctl ARCH_SET_CPUID fails with ENODEV on a PVM
// guest), and leaf 1 names the CPU a thread ran on. Where the CPU runs rdtsc for the program
// even under PR_SET_TSC (a paravirtualised guest, such as a PVM one, whose user code the host
// runs), rdtsc and rdtscp are replaced the same way, so that they are recorded and replayed as
// a trapped rdtsc is.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace rwd {

/// Whether rdtsc traps under PR_SET_TSC with PR_TSC_SIGSEGV (prctl(2)) on this machine:
/// probed in a forked child that sets the mode and runs rdtsc, once per boot
/// (machine_probes.h). REWIND_PATCH_TSC=1 makes it false (rewind then patches even where the
/// CPU traps: for tests), =0 true.
bool rdtsc_traps();

/// Whether the CPU makes rdtsc trap under PR_SET_TSC with PR_TSC_SIGSEGV: rdtsc_traps's probe,
/// without REWIND_PATCH_TSC. Where it does not, rewind leaves its tracees' mode alone
/// (spawn_traced, ptrace_ops.h).
bool cpu_traps_rdtsc();

/// Replaces the cpuid instructions, and where rdtsc does not trap (rdtsc_traps) the rdtsc and
/// rdtscp instructions, of the file mappings with execute permission of stopped task `tid`'s
/// process that overlap [lo, hi) by their faulting stand-ins (emulated_insns.h). Bytes that
/// are no longer the file's instruction (already replaced, or changed by the program) are
/// left alone. Returns how many it replaced. Throws SystemError when the memory cannot be
/// written.
size_t patch_emulated_insns(pid_t tid, uint64_t lo = 0, uint64_t hi = UINT64_MAX);

/// Puts the original instructions back into `bytes`, read from process `pid` at `addr`,
/// where patch_emulated_insns replaced them: what a debugger shows is the program's code.
void unpatch_emulated_view(pid_t pid, uint64_t addr, std::vector<uint8_t>& bytes);

}  // namespace rwd
