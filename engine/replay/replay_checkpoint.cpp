// Checkpoints of a replay (DESIGN.md "Checkpoints and reverse execution"): a stopped copy of
// every replayed process (process_copy.h), and new replays continuing from one
// (replay_session_impl.h).
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/replay/process_copy.h"
#include "engine/replay/replay_session_impl.h"

namespace rwd {

/// The stopped copies of the replayed processes just after event `done`.
struct ReplaySession::Checkpoint {
  uint64_t done = 0;
  std::map<pid_t, ReplayTask> tasks;  ///< the copy's threads, and ended tasks as records
  uint64_t points = 0, point_stops = 0;
  TraceReader::Position position;  ///< the reader just after event `done` (or `in_progress`)
  /// checkpoint_between: the event whose replay was in progress (read already).
  std::optional<Event> in_progress;
  /// checkpoint_between: bytes of that event's buffered records its task had marked used.
  uint32_t in_progress_used = 0;
  /// The replay's copies of shared files, which the stopped copies map, and their contents
  /// at the checkpoint (put back by a replay continuing from it); none where no copy exists.
  std::shared_ptr<SharedFiles> shared;
  std::optional<SharedFiles::Snapshot> shared_contents;
  ~Checkpoint() {
    // A stopped tracee dies of SIGKILL at once; reap every thread (they are this process's
    // tracees). A thread group's leader is reported only after its other threads are reaped.
    for (bool leaders : {false, true})
      for (auto& [rec, t] : tasks) {
        if (t.state == TaskState::Exited || (t.tid == t.pid) != leaders) continue;
        kill(t.tid, SIGKILL);
        forget_registers();
        while (waitpid(t.tid, nullptr, __WALL) < 0 && errno == EINTR) {
        }
      }
  }
};

void ReplaySession::CheckpointDeleter::operator()(Checkpoint* c) const {
  delete c;
}

namespace {

/// `tasks` grouped by process (real pid): each thread group is copied on its own.
std::map<pid_t, std::vector<ReplayTask*>> by_process(const std::vector<ReplayTask*>& tasks) {
  std::map<pid_t, std::vector<ReplayTask*>> out;
  for (ReplayTask* t : tasks) out[t->pid].push_back(t);
  return out;
}

/// True when process `pid` maps memory that is both shared and writable (MAP_SHARED), or a
/// System V segment ("/SYSV" in /proc/PID/maps, proc(5)): its copy would share those pages
/// with the replay, which goes on changing them. A replay's copy of a shared file
/// (shared_files.h) counts only where not `copies_ok`: a checkpoint keeps a snapshot of the
/// copies, a diversion (which runs on, and may write them) cannot.
bool maps_shared_memory(pid_t pid, bool copies_ok) {
  for (const ProcMapping& m : read_proc_maps(pid)) {
    if (!m.shared) continue;
    const bool copy = m.path.rfind(SharedFiles::kMapName, 0) == 0;
    if (copy ? !copies_ok : m.write || m.path.rfind("/SYSV", 0) == 0) return true;
  }
  return false;
}

/// The first thread of a process sharing its parent's memory (CLONE_VM, vm_clone_flags), or
/// nullptr for any other process.
const ReplayTask* memory_child(const std::vector<ReplayTask*>& threads) {
  for (const ReplayTask* t : threads)
    if (t->tid == t->pid && t->vm_clone_flags && t->vm_parent) return t;
  return nullptr;
}

/// The process (pid) among `processes` of the task whose real tid is `tid`, or 0.
pid_t process_of(const std::map<pid_t, std::vector<ReplayTask*>>& processes, pid_t tid) {
  for (const auto& [pid, threads] : processes)
    for (const ReplayTask* t : threads)
      if (t->tid == tid) return pid;
  return 0;
}

/// Copies every process of `processes` (live tasks by process), each by its own fork; a
/// process sharing another's memory (CLONE_VM) is cloned into that one's copy instead, after
/// it. Returns the copies by recorded tid. Throws DivergenceError.
std::map<pid_t, ReplayTask> copy_processes(
    const std::map<pid_t, std::vector<ReplayTask*>>& processes) {
  std::map<pid_t, ReplayTask> out;
  std::map<pid_t, pid_t> copy_leader;  // original pid -> the recorded tid of its copy's leader
  std::vector<pid_t> later;
  for (const auto& [pid, threads] : processes) {
    if (memory_child(threads)) {
      later.push_back(pid);
      continue;
    }
    for (const ReplayTask* t : threads)
      if (t->tid == t->pid) copy_leader[pid] = t->rec_tid;
    out.merge(copy_process(threads));
  }
  // A sharer may itself share another's memory: each round copies those whose sharer is in.
  while (!later.empty()) {
    size_t before = later.size();
    for (auto it = later.begin(); it != later.end();) {
      const std::vector<ReplayTask*>& threads = processes.at(*it);
      const ReplayTask* child = memory_child(threads);
      auto sharer = copy_leader.find(process_of(processes, child->vm_parent));
      if (sharer == copy_leader.end()) {
        ++it;
        continue;
      }
      copy_leader[*it] = child->rec_tid;
      out.merge(copy_memory_sharer(threads, out.at(sharer->second)));
      it = later.erase(it);
    }
    if (later.size() == before)
      throw DivergenceError("a process sharing its parent's memory outlived every sharer");
  }
  return out;
}

}  // namespace

ReplaySession::CheckpointPtr ReplaySession::Impl::checkpoint(bool need_position, bool between) {
  // Between events the session has no event in progress; in the middle of one, it has read
  // that event and nothing after it.
  if (between && (!cur_ || finished_ || next_ || code_patched())) return nullptr;
  std::vector<ReplayTask*> live;
  for (auto& [rec, t] : tasks_)
    if (t.state != TaskState::Exited) live.push_back(&t);
  if (live.empty()) return nullptr;
  // Every live process, with all its threads, each copied by its own fork (a process sharing
  // another's memory, CLONE_VM, by a clone in that one's copy). The copies need no family
  // ties: the syscalls between processes (wait4, kill, pipes) are emulated from the trace.
  // Not copied (the timeline then starts over from an earlier checkpoint): a task inside a
  // fork or a vfork child (sharing its parent's memory), a process whose leader has ended or
  // knows no `syscall` instruction, and memory shared between processes (MAP_SHARED and
  // writable, System V segments), which a copy would share with the replay.
  // A process sharing another's memory is copied into a living sharer's copy: its parent, or
  // another thread of the parent's process; when none is left, the memory is its own.
  for (ReplayTask* t : live) {
    if (!t->vm_clone_flags) continue;
    t->vm_parent = memory_sharer(*t);
    if (!t->vm_parent) t->vm_clone_flags = 0;
  }
  auto processes = by_process(live);
  for (const auto& [pid, threads] : processes) {
    bool can_fork = false;  // the leader forks (process_copy.h)
    const ReplayTask* child = memory_child(threads);
    for (ReplayTask* t : threads) {
      if (t->state != TaskState::Running || (t->vm_parent && !child)) return nullptr;
      can_fork |= t->tid == t->pid && (t->syscall_insn || t->at_entry);
    }
    // A process sharing another's memory is cloned by the other's copy, which must exist.
    if (child && !process_of(processes, child->vm_parent)) return nullptr;
    if (!can_fork || maps_shared_memory(pid, need_position)) return nullptr;
  }
  // A SIGTRAP the kernel holds for a task (a watchpoint hit while the task was being
  // interrupted) is delivered as soon as it runs: to the fork or clone injected in it,
  // instead of the syscall entry; the timeline takes the checkpoint at a later stop. (Other
  // pending signals, a replayed child's SIGCHLD, come after the injected syscall, which
  // copes with them.)
  constexpr uint64_t kTrap = signal_bit(SIGTRAP);
  for (ReplayTask* t : live) {
    ProcSignals s = read_proc_signals(t->tid);
    if ((s.pending | s.shared_pending) & ~s.blocked & kTrap) return nullptr;
  }
  CheckpointPtr c(new Checkpoint);
  c->done = done_;
  c->points = points_;
  c->point_stops = point_stops_;
  if (next_ && need_position) return nullptr;  // read ahead: the reader is past `done_`
  c->position = trace_.position();
  if (between) {
    c->in_progress = cur_->e;
    // The buffer's position counts this event's records only: buffer_reached set it to 0 at
    // the task's previous event that had any.
    auto it = tasks_.find(cur_->rec_tid);
    if (!cur_->e.buffered.empty() && it != tasks_.end() && it->second.syscall_buffer &&
        it->second.state != TaskState::Exited)
      read_memory_exact(it->second.tid, it->second.syscall_buffer, &c->in_progress_used,
                        sizeof c->in_progress_used);
  }
  if (!shared_->empty()) {
    c->shared_contents = shared_->snapshot();
    if (!c->shared_contents) return nullptr;  // too large to keep a copy of
  }
  c->shared = shared_;
  c->tasks = copy_processes(processes);
  // Threads that ended before this point but whose Exit event comes after it (their exit
  // syscall is replayed, the event that collects them not yet): kept as records, so that
  // replay from the checkpoint finds them at that event.
  for (auto& [rec, x] : tasks_)
    if (x.state == TaskState::Exited) c->tasks[rec] = x;
  return c;
}

ReplaySession::Impl::Impl(const ReplayOptions& o, const ReplaySession::Checkpoint& c) : Impl(o) {
  // The checkpoint stays as it is: this replay continues in a copy of it, whose mappings of
  // shared files show the contents they had then.
  shared_ = c.shared;
  if (c.shared_contents) shared_->restore(*c.shared_contents);
  std::map<pid_t, ReplayTask> stopped = c.tasks;
  std::vector<ReplayTask*> threads;
  for (auto& [rec, t] : stopped) {
    if (t.state == TaskState::Exited)
      tasks_[rec] = t;
    else
      threads.push_back(&t);
  }
  for (auto& [rec, t] : copy_processes(by_process(threads))) tasks_[rec] = t;
  root_started_ = true;
  points_ = c.points;
  point_stops_ = c.point_stops;
  trace_.seek(c.position);
  if (c.in_progress) {
    next_ = *c.in_progress;  // replayed again from where its task stands
    resume_used_ = c.in_progress_used;
  }
  done_ = c.done;
}

ReplaySession::CheckpointPtr ReplaySession::checkpoint() {
  return impl_->checkpoint(true);
}
ReplaySession::CheckpointPtr ReplaySession::checkpoint_between() {
  return impl_->checkpoint(true, true);
}
ReplaySession::CheckpointPtr ReplaySession::diversion() {
  return impl_->checkpoint(false);
}
uint64_t ReplaySession::checkpoint_event(const Checkpoint& c) {
  return c.done;
}
std::vector<pid_t> ReplaySession::checkpoint_pids(const Checkpoint& c) {
  std::vector<pid_t> out;
  for (auto& [rec, t] : c.tasks)
    if (t.state != TaskState::Exited && t.tid == t.pid) out.push_back(t.pid);
  return out;
}
const ReplayTask* ReplaySession::checkpoint_task(const Checkpoint& c, pid_t rec_tid) {
  auto it = c.tasks.find(rec_tid);
  return it == c.tasks.end() || it->second.state == TaskState::Exited ? nullptr : &it->second;
}

}  // namespace rwd
