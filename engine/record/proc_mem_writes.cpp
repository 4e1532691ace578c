// Writes into /proc/PID/mem (proc(5)) by the recorded program: a debugger inside the recording
// (gdb writes its breakpoints and the variables a user sets this way, falling back to
// PTRACE_POKEDATA), or a program patching its own code. The kernel changes the target's
// memory; an emulated write would not, so the event keeps the bytes and replay writes them
// into the replayed process (Event::written_memory), as rr records such writes.
//
// Replay makes the write at the writer's event. That gives the same memory only where the
// target's tasks run no code between their last events and that point: tasks of the writer's
// own address space (one of them runs at a time, and a task that waits has its point in the
// trace), or tasks stopped for their tracer at an event (a debugger's stopped inferior). A
// write into a process that runs is refused with one line.
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <fstream>
#include <string>

#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"
#include "engine/record/record_session.h"

namespace rwd {

namespace {

/// The process or thread id named by a /proc/N/mem or /proc/N/task/M/mem path (M: the
/// thread's, whose process's memory it is), or 0 for any other path.
pid_t proc_mem_path_task(const std::string& path) {
  int n = 0, m = 0, end = 0;
  if (std::sscanf(path.c_str(), "/proc/%d/mem%n", &n, &end) == 1 && size_t(end) == path.size())
    return n;
  end = 0;
  if (std::sscanf(path.c_str(), "/proc/%d/task/%d/mem%n", &n, &m, &end) == 2 &&
      size_t(end) == path.size())
    return m;
  return 0;
}

/// The file position of task `tid`'s descriptor `fd` (the "pos:" line of
/// /proc/TID/fdinfo/FD, proc(5)), or -1 when it cannot be read.
int64_t fd_position(pid_t tid, int fd) {
  std::ifstream in("/proc/" + std::to_string(tid) + "/fdinfo/" + std::to_string(fd));
  std::string key;
  int64_t pos = -1;
  if (in >> key >> pos && key == "pos:") return pos;
  return -1;
}

/// Whether task x has run no instruction since its last event, so that replay's copy of it
/// stands there too when the writer's event is replayed: in a stop for its tracer at an
/// event, or at a fork-like syscall's event stop (its memory is as the event left it), or
/// resumed from such a stop and waiting for its turn.
bool stands_at_event(const RecordTask& x) {
  if (x.tracer_stop) return x.tracer_stop_at_event || x.tracer_stop_kind == TracerStop::NewTask;
  return x.state == RunState::Stopped && x.unrun_since_tracer_stop;
}

}  // namespace

void RecordSession::note_proc_mem_write(RecordTask& t, Event& e) {
  const long nr = long(t.entry.orig_rax);
  if (e.result <= 0 || t.entry.rdi > INT_MAX) return;
  if (nr != SYS_write && nr != SYS_pwrite64 && nr != SYS_writev && nr != SYS_pwritev &&
      nr != SYS_pwritev2)
    return;
  const int fd = int(t.entry.rdi);
  char link[PATH_MAX] = {};
  const std::string at = "/proc/" + std::to_string(t.tid) + "/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(at.c_str(), link, sizeof link - 1);
  if (n <= 0) return;
  const pid_t named = proc_mem_path_task(std::string(link, size_t(n)));
  if (!named) return;  // another file
  const std::string what = "a write into /proc/" + std::to_string(named) + "/mem";
  // Inside a PID namespace the path's number is the namespace's, not rewind's.
  if (!in_rewinds_pid_namespace(t.tid))
    throw UnsupportedError(what + " inside a PID namespace (CLONE_NEWPID) is not supported yet");
  auto target = tasks_.find(named);
  if (target == tasks_.end()) return;  // a process outside the recording: like a file
  // Where the bytes went: the call's offset, or the file position it moved past.
  const bool positioned =
      nr == SYS_pwrite64 || nr == SYS_pwritev || (nr == SYS_pwritev2 && int64_t(t.entry.r10) != -1);
  const int64_t end = positioned ? int64_t(t.entry.r10) + e.result : fd_position(t.tid, fd);
  if (end < e.result) throw UnsupportedError(what + " at an unknown address");
  AddressSpace* written = &space(target->second);
  if (written != &space(t)) {
    for (const auto& [tid, x] : tasks_)
      if (&space(x) == written && !stands_at_event(x))
        throw UnsupportedError(what + " while task " + std::to_string(tid) +
                               " of that process runs is not supported yet (gdb does it "
                               "for displaced stepping: `set displaced-stepping off`)");
  }
  e.written_tid = named;
  e.written_memory.addr = uint64_t(end - e.result);
  e.written_memory.bytes = read_memory(named, e.written_memory.addr, size_t(e.result));
}

}  // namespace rwd
