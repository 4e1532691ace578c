// Page-at-a-time reads of a stopped process's memory, kept for the life of one stop: the
// unwinder and the interpreter-frame readers make many small reads, and on a replay each read
// of the Target is a round trip to the timeline's engine thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/symbols/target.h"

namespace rwd {

/// Reads `target`'s memory through whole 4 KiB pages, each read from the target once. The
/// process must stay stopped while this lives (discard it when it runs again).
class PageCache {
 public:
  explicit PageCache(Target& target) : target_(target) {}
  /// Copies the `n` bytes at `addr` into `out`; false when any of them is unreadable (then
  /// `out` may hold part of them).
  bool read(uint64_t addr, void* out, size_t n);
  Target& target() { return target_; }

 private:
  Target& target_;
  /// Page address -> its bytes: shorter than a page where the page is not (wholly) readable.
  std::unordered_map<uint64_t, std::vector<uint8_t>> pages_;
};

/// A Target whose memory reads go through a PageCache and whose registers are read once per
/// thread: for reading much at one stop (a stack, arguments, values) with few round trips
/// to a replay's engine thread. Mappings and auxv are passed through. Discard it when the
/// process runs again.
class CachedTarget : public Target {
 public:
  explicit CachedTarget(Target& target) : target_(target), pages_(target) {}
  std::vector<uint8_t> read_memory(uint64_t addr, size_t len) override;
  Registers registers(pid_t tid) override;
  std::vector<ProcMapping> mappings() override { return target_.mappings(); }
  std::vector<uint8_t> auxv() override { return target_.auxv(); }
  std::optional<user_fpregs_struct> fp_registers(pid_t tid) override {
    return target_.fp_registers(tid);
  }

 private:
  Target& target_;
  PageCache pages_;
  std::map<pid_t, Registers> regs_;
};

}  // namespace rwd
