// Writes into /proc/PID/mem (proc(5)) by the recorded program: a debugger inside the recording
// (gdb writes its breakpoints and the variables a user sets this way, falling back to
// PTRACE_POKEDATA), or a program patching its own code. The kernel changes the target's
// memory; an emulated write would not, so the event keeps the bytes and replay writes them
// into the replayed process (Event::written_memory), as rr records such writes.
//
// Replay makes the write at the writer's event. That gives the same memory only where the
// target's tasks run no code between their last events and that point: tasks of the writer's
// own address space (one of them runs at a time, and a task that waits has its point in the
// trace), or tasks of another memory that the write holds still: from the write's entry to
// its event, none of them is scheduled. The one running then is preempted first (a Sched
// event, as at the end of a time slice), and the write waits at its entry for that; those
// waiting in syscalls get their entries' events, and those stopped for their tracer stand at
// events already. gdb writes this way while its inferior's other threads run, to step a
// thread over a breakpoint out of line (displaced stepping). Where a task still stands
// between events (a group-stop, a signal waiting for its turn), the write is refused with one
// line.
//
// Inside a PID namespace the path's number depends on the /proc it was opened in: rewind's own
// (the recorder's device for /proc) numbers tasks as rewind does; another procfs, mounted by
// the program (`unshare --pid --mount-proc`), numbers them as the writer's namespace does
// (pid_seen_by), which is taken to be that procfs's namespace.
#include <linux/magic.h>
#include <sys/ptrace.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
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

/// Whether task x has run no instruction since its last event, so that replay's copy of it
/// stands there too when the writer's event is replayed: in a stop for its tracer at an
/// event, or at a fork-like syscall's event stop (its memory is as the event left it), or
/// waiting for its turn where an event left it (RecordTask::unrun_since_event), or waiting in
/// a syscall whose entry has its event, or new and not yet stopped for the first time (it has
/// run nothing since its creator's fork-like event, where replay creates its copy).
bool stands_at_event(const RecordTask& x) {
  if (x.fresh) return true;
  if (x.tracer_stop) return x.tracer_stop_at_event || x.tracer_stop_kind == TracerStop::NewTask;
  if (x.state == RunState::InSyscall) return x.entry_marked;
  return x.state == RunState::Stopped && x.unrun_since_event;
}

/// True for the write-like syscalls whose bytes note_proc_mem_write keeps.
bool write_like(long nr) {
  return nr == SYS_write || nr == SYS_pwrite64 || nr == SYS_writev || nr == SYS_pwritev ||
         nr == SYS_pwritev2;
}

/// The number t's descriptor fd names a task by (/proc/N/mem, /proc/N/task/M/mem), or 0.
pid_t proc_mem_fd_number(pid_t tid, uint64_t fd) {
  if (fd > INT_MAX) return 0;
  const std::string link = link_target(fd_path(tid, int(fd)));
  return link.empty() ? 0 : proc_mem_path_task(link);
}

}  // namespace

bool RecordSession::on_procfs(pid_t tid, int fd, const struct stat& st) {
  if (proc_dev_ && st.st_dev == *proc_dev_) return true;
  if (!S_ISREG(st.st_mode)) return false;  // (the files that matter here are regular)
  auto [known, fresh] = procfs_devices_.try_emplace(st.st_dev, false);
  struct statfs fs;
  if (fresh)
    known->second = ::statfs(fd_path(tid, fd).c_str(), &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
  return known->second;
}

pid_t RecordSession::proc_mem_task(const RecordTask& t, const struct stat& st) {
  const pid_t number = proc_mem_fd_number(t.tid, t.entry.rdi);
  if (!number) return 0;
  if (proc_dev_ && st.st_dev == *proc_dev_) return number;  // rewind's numbers
  return recorded_task_named(t.tid, number);
}

bool RecordSession::hold_for_proc_mem_write(RecordTask& t, const struct stat& st) {
  if (!write_like(long(t.entry.orig_rax))) return false;
  const pid_t named = proc_mem_task(t, st);
  if (!named) return false;
  auto target = tasks_.find(named);
  if (target == tasks_.end()) return false;  // a process outside the recording: like a file
  std::shared_ptr<AddressSpace> held = group(target->second).space;
  // Into memory that takes turns with its own (Turns): every task there stands still while
  // the writer runs.
  if (held->turns == space(t).turns || !hold_space(t, held, false)) return false;
  ++held_writes_;
  return true;
}

bool RecordSession::hold_space(RecordTask& t, std::shared_ptr<AddressSpace> held,
                               bool past_syscalls) {
  if (held->turns->held_for_write) return false;
  held->turns->held_for_write = t.tid;
  held->turns->hold_past_syscalls = past_syscalls;
  t.written_space = held;
  update_timer();  // ticks, to retry the preemption
  RecordTask* running = held->turns->active ? &tasks_.at(held->turns->active) : nullptr;
  if (running && running->state == RunState::InSyscall && !running->entry_marked)
    mark_entry(*running);  // at its exit it waits for its turn (on_syscall_exit)
  if (!running || (running->state == RunState::InSyscall && !past_syscalls)) {
    mark_entries(*held, 0);
    return false;
  }
  // In a prompt syscall, it gives up its turn at the exit (on_syscall_exit), which starts
  // the held call (schedule); or it is preempted at its next point.
  if (running->state == RunState::InSyscall) {
    held->turns->write_waits = true;
    return true;
  }
  // Its running task stops at its next point (end_slices asks again where it was put off),
  // or enters a syscall (on_syscall_entry).
  if (!running->interrupt_requested &&
      ptrace(PTRACE_INTERRUPT, running->tid, nullptr, nullptr) == 0) {
    running->interrupt_requested = true;
    running->interrupt_tick = ticks_;
  }
  held->turns->write_waits = true;
  return true;
}

void RecordSession::start_held_write(AddressSpace& s) {
  if (!std::exchange(s.turns->write_waits, false)) return;
  mark_entries(s, 0);  // its code up to their entries ran before the write
  auto writer = tasks_.find(s.turns->held_for_write);
  if (writer != tasks_.end()) resume_syscall(writer->second);
}

void RecordSession::release_written_space(RecordTask& t) {
  std::shared_ptr<AddressSpace> held = std::move(t.written_space);
  t.written_space.reset();
  if (!held || held->turns->held_for_write != t.tid) return;
  held->turns->held_for_write = 0;
  held->turns->write_waits = held->turns->hold_past_syscalls = false;
  update_timer();
  schedule(*held);
}

void RecordSession::note_proc_mem_write(RecordTask& t, Event& e) {
  const long nr = long(t.entry.orig_rax);
  if (e.result <= 0 || !write_like(nr)) return;
  const int fd = int(t.entry.rdi);
  const pid_t named = t.write_target ? proc_mem_task(t, *t.write_target) : 0;
  if (!named) return;  // another file
  const std::string what = "a write into /proc/" + std::to_string(named) + "/mem";
  auto target = tasks_.find(named);
  if (target == tasks_.end()) return;  // a process outside the recording: like a file
  // Where the bytes went: the call's offset, or the file position it moved past.
  const bool positioned =
      nr == SYS_pwrite64 || nr == SYS_pwritev || (nr == SYS_pwritev2 && int64_t(t.entry.r10) != -1);
  const int64_t end = positioned ? int64_t(t.entry.r10) + e.result : fd_info(t.tid, fd).pos;
  if (end < e.result) throw UnsupportedError(what + " at an unknown address");
  AddressSpace* written = &space(target->second);
  if (written != &space(t)) {
    const bool held = written->turns->held_for_write == t.tid || written->turns == space(t).turns;
    for (const auto& [tid, x] : tasks_)
      if (&space(x) == written && (!held || !stands_at_event(x)))
        throw UnsupportedError(what + " while task " + std::to_string(tid) +
                               " of that process stands between its events is not supported yet");
  }
  e.written_tid = named;
  e.written_memory.addr = uint64_t(end - e.result);
  e.written_memory.bytes = read_memory(named, e.written_memory.addr, size_t(e.result));
}

}  // namespace rwd
