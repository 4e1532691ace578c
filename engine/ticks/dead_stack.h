// The dead part of a task's stack: the memory below its stack pointer and red zone, which the
// x86-64 psABI (3.2.2, "The Stack Frame") lets signal delivery and any callee overwrite. A
// point's digest leaves it out: what is written there is not always the same in record and
// replay (ld.so's lazy-binding trampoline saves the vector registers there with XSAVEC, whose
// header and skipped components depend on the CPU's XINUSE bits, Intel SDM vol. 1, 13.6).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "engine/os/proc.h"

namespace rwd {

/// Bytes below the stack pointer that a leaf function may still use (psABI 3.2.2).
constexpr uint64_t kRedZoneBytes = 128;

/// [start, length) of the dead part of the stack that `rsp` points into: from the lowest
/// address of its mapping up to rsp - 128. Only for a mapping that is a stack: the main
/// thread's "[stack]", or an anonymous private writable mapping with an inaccessible mapping
/// right below it (the guard page glibc's pthread_create puts under every thread stack).
/// Anything else (a coroutine stack inside the heap, an rsp outside every mapping) gives
/// nullopt, so that memory stays in the digest. `maps` is sorted by address (/proc order).
std::optional<std::pair<uint64_t, uint64_t>> dead_stack(const std::vector<ProcMapping>& maps,
                                                        uint64_t rsp);

}  // namespace rwd
