// The System V shared memory segments of a replay (shmop(2), sysvipc(7)). A recorded shmat
// attached a segment that other recorded processes may attach too, so replay attaches a real
// segment, shared the same way. The replayer creates it (IPC_PRIVATE), keeps it attached in
// its own address space and marks it removed at once: it lives while the replay or a replayed
// process has it attached, and never outlives the replay (Linux lets a process attach a
// segment marked removed; shmctl(2) "IPC_RMID").
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace rwd {

/// The replay's segments, by the id the recorded program knew (its shmget result).
class SysvSegments {
 public:
  SysvSegments() = default;
  ~SysvSegments();
  SysvSegments(const SysvSegments&) = delete;
  SysvSegments& operator=(const SysvSegments&) = delete;

  /// The real id of the replay's segment for recorded id `rec_id`, `bytes` long (a multiple of
  /// the page size), created on first use (or again when the recorded segment it had was
  /// `bytes` long no more: an id the kernel gave out again). Throws SystemError when the
  /// kernel refuses a new segment (shmget(2): ENOMEM, ENOSPC, or past kernel.shmmax).
  int real_id(int rec_id, uint64_t bytes);
  /// Writes `data` at byte `offset` of the segment for `rec_id` (created by real_id), through
  /// the replayer's own attachment: the recorded contents at an attach, also for a read-only
  /// attach. Throws Error when the bytes do not fit in the segment.
  void write(int rec_id, uint64_t offset, const std::vector<uint8_t>& data);
  /// The recorded program removed `rec_id` (shmctl IPC_RMID): the replayer detaches its
  /// segment; processes that have it attached keep it until they detach it.
  void remove(int rec_id);
  /// The number of segments the replay holds now.
  size_t size() const { return segments_.size(); }

 private:
  struct Segment {
    int id = -1;             ///< the real id
    uint8_t* mem = nullptr;  ///< the replayer's attachment
    uint64_t bytes = 0;
  };
  std::map<int, Segment> segments_;
};

}  // namespace rwd
