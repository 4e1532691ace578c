// Processes that come to share writable memory after they are apart: each maps one file
// MAP_SHARED (mmap(2)), attaches one System V segment (shmat(2)), or makes a read-only
// shared mapping writable (mprotect(2)) while another has it mapped. What each then reads
// depends on when the other wrote, as between threads, so their turns become one (Turns):
// from the call's exit on, one task of them runs at a time, preempted at recorded points, and
// replay keeps that order. A fork shares the turns of memory it copies shared and writable
// (record_syscall.cpp); this file covers memory mapped by each process for itself.
//
// The call is held at its entry until no task of the other process runs user code (the
// running one is preempted at its next point, one in a prompt syscall gives up its turn at
// the exit): the contents the call's event keeps (the file's, for a shared mapping) are then
// those the other process left at its last event, and nothing runs there until the turns
// are one.
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/record/record_session.h"

namespace rwd {

namespace {

/// What a mapping call shares: a file (device and inode, as /proc/PID/maps gives them) or a
/// System V segment (its shmid, which the kernel shows as the inode of a "/SYSV..." mapping),
/// and whether the call maps it writable.
struct SharedObject {
  uint64_t dev = 0, inode = 0;
  bool segment = false;  ///< a System V segment: inode is its shmid
  std::string path;      ///< the file's path in /proc/PID/maps, without " (deleted)"
  bool writes = false;
};

/// The memory mapping m (of /proc/PID/maps) maps, writable where `writes`.
SharedObject from_mapping(const ProcMapping& m, bool writes) {
  const bool segment = m.path.starts_with("/SYSV");
  return {.dev = m.dev,
          .inode = m.inode,
          .segment = segment,
          .path = segment ? std::string() : strip_deleted_suffix(m.path),
          .writes = writes};
}

/// The memory task `tid`'s call (registers `r`, at its entry) maps shared, one object for
/// mmap and shmat, those of its own read-only shared mappings an mprotect makes writable;
/// empty for any other call, or where the call fails anyway (a bad descriptor).
std::vector<SharedObject> shared_objects(pid_t tid, const Registers& r) {
  std::vector<SharedObject> objects;
  const long nr = long(r.orig_rax);
  if (nr == SYS_mmap && !(r.r10 & MAP_ANONYMOUS) && (r.r10 & MAP_SHARED_VALIDATE) != MAP_PRIVATE &&
      int(r.r8) >= 0) {
    const std::string fd = fd_path(tid, int(r.r8));
    struct stat st = {};
    if (::stat(fd.c_str(), &st) != 0) return objects;
    SharedObject o;
    o.dev = st.st_dev;
    o.inode = st.st_ino;
    o.writes = (r.rdx & PROT_WRITE) != 0;
    if (std::string link = link_target(fd); !link.empty()) o.path = strip_deleted_suffix(link);
    objects.push_back(o);
  } else if (nr == SYS_shmat && int(r.rdi) >= 0) {
    SharedObject o;
    o.inode = uint64_t(int(r.rdi));
    o.segment = true;
    o.writes = !(r.rdx & SHM_RDONLY);
    objects.push_back(o);
  } else if (nr == SYS_mprotect && (r.rdx & PROT_WRITE)) {
    const uint64_t start = r.rdi, end = r.rdi + r.rsi;
    try {
      for (const ProcMapping& m : read_proc_maps(tid))
        if (m.shared && !m.write && m.start < end && start < m.end && !m.is_special())
          objects.push_back(from_mapping(m, true));
    } catch (const SystemError&) {
    }
  }
  return objects;
}

/// Whether two objects are the same memory, mapped writable by one or both: the same
/// segment, or the same file by device and inode, or by path where a stacked file system
/// (overlayfs) shows its own device in stat(2) and the underlying one in /proc/PID/maps.
bool same_memory(const SharedObject& a, const SharedObject& b) {
  if (a.segment != b.segment || !(a.writes || b.writes)) return false;
  if (a.segment) return a.inode == b.inode;
  return (a.dev == b.dev && a.inode == b.inode) || (!a.path.empty() && a.path == b.path);
}

/// Whether process `pid` maps one of `objects` shared, with write access on one side or the
/// other. False where its maps cannot be read (it is ending).
bool maps_any(pid_t pid, const std::vector<SharedObject>& objects) {
  try {
    for (const ProcMapping& m : read_proc_maps(pid)) {
      if (!m.shared) continue;
      const SharedObject theirs = from_mapping(m, m.write);
      for (const SharedObject& o : objects)
        if (same_memory(o, theirs)) return true;
    }
  } catch (const SystemError&) {
  }
  return false;
}

/// Whether a task of `s` (of `tasks`) is inside a call that maps one of `objects`: its
/// mapping may not be in its maps yet when another process's call looks for it.
bool maps_in_flight(const std::map<pid_t, RecordTask>& tasks, const AddressSpace& s,
                    const std::vector<SharedObject>& objects) {
  for (pid_t tid : s.tasks) {
    auto x = tasks.find(tid);
    if (x == tasks.end() || x->second.state != RunState::InSyscall) continue;
    for (const SharedObject& theirs : shared_objects(tid, x->second.entry))
      for (const SharedObject& o : objects)
        if (same_memory(o, theirs)) return true;
  }
  return false;
}

}  // namespace

bool RecordSession::hold_for_shared_mapping(RecordTask& t) {
  t.joins_turns = false;
  if (t.skip_syscall || t.written_space) return false;
  const long nr = long(t.entry.orig_rax);
  if (nr != SYS_mmap && nr != SYS_shmat && nr != SYS_mprotect) return false;
  const std::shared_ptr<Turns> own = space(t).turns;
  // Held for another task's call itself: it joins nothing (a limit: the mapping's accesses
  // then interleave unrecorded, as before this file).
  if (own->held_for_write) return false;
  // Most programs are one process: no maps to read then (an mprotect's own, at every call).
  if (turn_takers().size() < 2) return false;
  const std::vector<SharedObject> objects = shared_objects(t.tid, t.entry);
  if (objects.empty()) return false;
  for (auto& [pid, g] : groups_) {
    const std::shared_ptr<AddressSpace>& other = g.space;
    if (other->turns == own || other->tasks.empty()) continue;
    if (!maps_any(other->tasks.front(), objects) && !maps_in_flight(tasks_, *other, objects))
      continue;
    // One other set of turns a call: a second that maps it too is joined by its next call.
    const bool waits = hold_space(t, other, true);
    t.joins_turns = t.written_space != nullptr;
    return waits;
  }
  return false;
}

void RecordSession::join_shared_turns(RecordTask& t, int64_t result) {
  if (!std::exchange(t.joins_turns, false) || !t.written_space) return;
  if (syscall_failed(result)) return;  // the call failed: nothing is shared
  const std::shared_ptr<Turns> own = space(t).turns;
  const std::shared_ptr<Turns> joined = t.written_space->turns;
  // The hold left no task of the joined turns running (hold_space); t runs in its own.
  // Where that does not hold, or another call holds t's own turns now, they stay apart.
  if (joined == own || joined->active || joined->held_for_write != t.tid || own->held_for_write)
    return;
  for (AddressSpace* s : spaces())
    if (s->turns == own) s->turns = joined;
  joined->ready.insert(joined->ready.end(), own->ready.begin(), own->ready.end());
  joined->active = own->active;
  ++joined_turns_;
  update_timer();  // ticks, where tasks of both now wait for the running one's slice to end
}

}  // namespace rwd
