// The debugger's watchpoints and the x86 debug-register slots that hold them in each replayed
// task (Intel SDM vol. 3, 17.2: DR0-DR3 addresses, DR7 enables; slot 0 is the replay's own
// breakpoint, slots 1-3 the debugger's). Internal to engine/timeline.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <vector>

#include "engine/os/debug_registers.h"

namespace rwd {

/// The debugger's watchpoint: a range in one debug-register slot.
struct Watch {
  uint64_t addr = 0;
  int len = 0;  ///< bytes: 1, 2, 4 or 8, or up to kMaxWatchBytes for a wide write watch
  WatchKind kind = WatchKind::Write;
  int slot = 0;               ///< 1..kWatchSlots
  std::vector<uint8_t> last;  ///< value at the last stop of this replay
};

/// The set of watchpoints and, per replayed task, whether its debug registers hold it.
/// Not thread-safe (the replay thread owns it).
class WatchRegisters {
 public:
  /// Adds a watchpoint on `len` bytes at `addr` in a free slot: 1, 2, 4 or 8 aligned to
  /// `len`, or a wide write watch (wide_watch(): up to kMaxWatchBytes, kept in software).
  /// Returns false, changing nothing, for a wide read-and-write watch, more than
  /// kMaxWatchBytes, or when every slot is taken.
  bool add(uint64_t addr, int len, WatchKind kind);
  /// Removes the watchpoint with exactly these fields, if any.
  void remove(uint64_t addr, int len, WatchKind kind);
  /// Arms task `tid`'s slots for the current set, and reads the value of any watchpoint not
  /// read yet. Called before every resume, so it touches the registers (four ptrace calls a
  /// slot) only when the set changed since this task was last armed.
  void arm(pid_t tid);
  /// Task `tid` holds nothing now (an exec cleared its debug registers).
  void forget(pid_t tid) { armed_.erase(tid); }
  /// A new replay: its tasks hold nothing, and no value has been read in it.
  void restart();
  /// The watchpoints (their `last` values are the controller's to update).
  std::vector<Watch>& all() { return watches_; }
  bool empty() const { return watches_.empty(); }
  /// Whether a watchpoint is kept in a software slot (a wide one, or any where the CPU's
  /// slots do not serve programs): runs then stop at writes to its pages, and a moved
  /// instruction's write is not seen as the original's.
  bool in_software() const;

 private:
  std::vector<Watch> watches_;
  /// Bumped when watches_ changes; per real tid, the version its debug registers hold (a task
  /// starts with none armed: version 0, and version_ starts at 1).
  uint64_t version_ = 1;
  std::map<pid_t, uint64_t> armed_;
};

}  // namespace rwd
