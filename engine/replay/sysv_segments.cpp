#include "sysv_segments.h"

#include <sys/shm.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "engine/errors.h"

namespace rwd {

SysvSegments::~SysvSegments() {
  for (auto& [rec, s] : segments_) shmdt(s.mem);
}

int SysvSegments::real_id(int rec_id, uint64_t bytes) {
  auto it = segments_.find(rec_id);
  if (it != segments_.end() && it->second.bytes == bytes) return it->second.id;
  if (it != segments_.end()) remove(rec_id);
  int id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0600);
  if (id < 0)
    throw SystemError("cannot create a System V shared memory segment of " + std::to_string(bytes) +
                          " bytes for the replay",
                      errno);
  void* mem = shmat(id, nullptr, 0);
  int err = errno;
  shmctl(id, IPC_RMID, nullptr);  // gone with the last detach, the replayer's included
  if (mem == reinterpret_cast<void*>(-1))
    throw SystemError("cannot attach the replay's System V segment", err);
  segments_[rec_id] = {id, static_cast<uint8_t*>(mem), bytes};
  return id;
}

void SysvSegments::write(int rec_id, uint64_t offset, const std::vector<uint8_t>& data) {
  auto it = segments_.find(rec_id);
  if (it == segments_.end() || offset > it->second.bytes || data.size() > it->second.bytes - offset)
    throw Error("recorded contents outside System V segment " + std::to_string(rec_id));
  std::memcpy(it->second.mem + offset, data.data(), data.size());
}

void SysvSegments::remove(int rec_id) {
  auto it = segments_.find(rec_id);
  if (it == segments_.end()) return;
  shmdt(it->second.mem);
  segments_.erase(it);
}

}  // namespace rwd
