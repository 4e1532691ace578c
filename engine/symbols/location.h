// Where a variable's value lives, computed from a DWARF location description (DWARF 5
// section 2.6): single expressions and location lists, evaluated by a stack machine over a
// frame's registers and the process's memory.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/symbols/dwarf_file.h"
#include "engine/symbols/target.h"
#include "engine/symbols/unwinder.h"

namespace rwd {

/// The result of evaluating a location.
struct Location {
  enum class Kind : uint8_t {
    Memory,        ///< the value is in memory at `addr`
    Bytes,         ///< the value is `bytes` (a register, DW_OP_stack_value, pieces...)
    OptimizedOut,  ///< no location at this pc ("<optimized out>" as gdb says)
    Error,         ///< cannot be computed: `error` says why
  };
  Kind kind = Kind::OptimizedOut;
  uint64_t addr = 0;
  std::vector<uint8_t> bytes;
  std::string error;
};

/// What evaluating an expression may need from the frame it is evaluated in.
struct LocationContext {
  Target* target = nullptr;
  FrameRegisters regs;                 ///< the frame's registers (DWARF numbering)
  uint64_t cfa = 0;                    ///< DW_OP_call_frame_cfa (0: unknown)
  std::optional<uint64_t> frame_base;  ///< DW_OP_fbreg's base (from DW_AT_frame_base)
  uint64_t pc = 0;                     ///< link-time pc used to pick a location-list entry
  uint64_t bias = 0;                   ///< module load bias (DW_OP_addr is a link address)
  /// xmm0-15 (DWARF registers 17-32), 16 bytes each; only in the innermost frame, where
  /// they are the thread's own (outer frames cannot know them: the ABI saves none).
  std::optional<std::array<uint8_t, 256>> xmm;
  /// DW_OP_entry_value of register `reg` (the value it had when the function was entered),
  /// resolved through the caller's call-site parameters; nullopt when unknown.
  std::function<std::optional<uint64_t>(int reg)> entry_value;
};

/// Evaluates attribute `at` (DW_AT_location, DW_AT_frame_base...) of `die` at ctx.pc.
/// Kind::OptimizedOut when the DIE has no such attribute or no list entry covers the pc.
Location evaluate_location(const Die& die, int at, const LocationContext& ctx);

/// Evaluates a location expression given as raw bytes (DW_FORM_exprloc contents).
Location evaluate_expression(const uint8_t* bytes, size_t len, const LocationContext& ctx);

}  // namespace rwd
