// Unwinding a thread's stack with libunwind (remote address space, our own accessors), so
// that the same code reads a live process and a replayed one. Unwind tables come from each
// module's .eh_frame_hdr (found through ModuleList), read from the process's memory.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "engine/symbols/module_list.h"
#include "engine/symbols/target.h"

namespace rwd {

/// Registers of one frame, numbered as DWARF numbers them on x86-64 (System V psABI,
/// "DWARF Register Number Mapping"): 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp,
/// 8-15 r8-r15, 16 the return address (rip).
struct FrameRegisters {
  static constexpr int kCount = 17;
  std::array<uint64_t, kCount> value{};
  uint32_t valid = 0;  ///< bit n set when value[n] is known in this frame
  bool has(int n) const { return n >= 0 && n < kCount && (valid >> n & 1); }
  void set(int n, uint64_t v) {
    value[size_t(n)] = v;
    valid |= 1u << n;
  }
};

/// The DWARF numbering of a thread's full register set (the innermost frame).
FrameRegisters frame_registers(const Registers& r);

/// One physical frame (a real call on the stack).
struct PhysicalFrame {
  uint64_t pc = 0;   ///< runtime address: where execution is (frame 0) or returns to
  uint64_t cfa = 0;  ///< canonical frame address (the caller's rsp before the call), 0 unknown
  FrameRegisters regs;
  /// True when pc is a return address (every frame but the innermost, unless the frame
  /// below is a signal frame): symbol lookups use pc - 1 to stay in the calling line.
  bool return_address = false;
};

/// Unwinds `tid` from its current registers, innermost frame first, up to `max_frames`.
/// Stops early (never throws) at the outermost frame or where unwinding fails.
std::vector<PhysicalFrame> unwind_stack(Target& target, const ModuleList& modules, pid_t tid,
                                        size_t max_frames = 256);

/// The runtime range [lo, hi) of librewind_preload.so's code among `modules`; nullopt when
/// the library is not loaded (a process started without it, or before the loader maps it).
std::optional<std::pair<uint64_t, uint64_t>> preload_code(const ModuleList& modules);

/// The runtime range [start, end) of the unwind-table entry (the .eh_frame FDE, found through
/// the module's .eh_frame_hdr) that covers code address `ip`: a function, or one part of a
/// function its compiler split (a cold or partitioned block has an FDE of its own). nullopt
/// when no module's table covers it.
std::optional<std::pair<uint64_t, uint64_t>> unwind_table_range(Target& target,
                                                                const ModuleList& modules,
                                                                uint64_t ip);

}  // namespace rwd
