// The replay session's insides (replay_session.h), shared by its files: the event loop as a
// state machine (replayer.cpp), the syscall replays (syscall_replay.cpp) and checkpoints
// (replay_checkpoint.cpp). Internal to engine/replay.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "engine/arch/clone_args.h"
#include "engine/errors.h"
#include "engine/replay/reach_point.h"
#include "engine/replay/replay_session.h"
#include "engine/replay/replay_task.h"
#include "engine/replay/replayer.h"
#include "engine/replay/shared_files.h"
#include "engine/replay/sysv_segments.h"
#include "engine/trace/event.h"
#include "engine/trace/trace_reader.h"

namespace rwd {

/// After rewind ran a syscall inside the task (possibly with changed arguments), puts back the
/// task's own registers as they were at the syscall entry, with `result` in rax. The segment
/// bases stay as the kernel left them: arch_prctl(ARCH_SET_FS) changes fs_base.
void finish_syscall(pid_t tid, const Registers& entry, int64_t result);

class ReplaySession::Impl {
 public:
  /// Opens the trace (TraceError when it cannot be replayed here).
  explicit Impl(const ReplayOptions& o);
  /// Resumes the replay of `c`: a fresh fork of its process continues from its event.
  Impl(const ReplayOptions& o, const ReplaySession::Checkpoint& c);
  ~Impl();
  /// ReplaySession::checkpoint (need_position, not `between`), checkpoint_between (both) and
  /// diversion (neither).
  ReplaySession::CheckpointPtr checkpoint(bool need_position, bool between = false);
  /// The next event to replay (after the one in progress), reading ahead one.
  const Event* peek() {
    if (!next_ && !at_end_) {
      next_ = trace_.next();
      at_end_ = !next_;
    }
    return next_ ? &*next_ : nullptr;
  }
  /// ReplaySession::run.
  ReplayStep run(const RunCommand& cmd);
  ReplayResult result() const;
  bool code_patched() const { return cur_ && cur_->search && cur_->search->code_patched(); }
  bool point_search_waits_at(pid_t rec_tid, uint64_t rip) const {
    return cur_ && cur_->rec_tid == rec_tid && cur_->search && cur_->search->waits_at(rip);
  }

  ReplayOptions opts_;
  TraceReader trace_;
  std::map<pid_t, ReplayTask> tasks_;  ///< by recorded tid
  SysvSegments sysv_;                  ///< System V shared memory the replay attached
  /// The copies of files mapped shared (shared_files.h), which the checkpoints' copies of the
  /// processes map too, and the replays continuing from them.
  std::shared_ptr<SharedFiles> shared_ = std::make_shared<SharedFiles>();
  uint64_t done_ = 0;
  /// ReplaySession::pause_in_buffer's request.
  struct PauseRequest {
    pid_t rec_tid = 0;
    uint64_t event = 0;
    uint32_t pos = 0;
  };
  std::optional<PauseRequest> pause_request_;
  /// Bytes of buffered records the task of the event in progress had marked used when the
  /// checkpoint_between this replay continues from was taken: its next fill_buffer (of that
  /// event, replayed again) writes only the records after them. 0 otherwise.
  uint32_t resume_used_ = 0;

 private:
  /// What the task of the event in progress must reach by running its own code.
  enum class Goal : uint8_t {
    None,          ///< nothing: the event is applied at once
    SyscallEntry,  ///< its syscall's entry (Syscall, SyscallEntry, Exec events)
    Signal,        ///< the recorded signal's delivery stop
    Emulated,      ///< the SIGSEGV of its trapped rdtsc, or its replaced rdtsc or cpuid
    Exit,          ///< its end
    Point,         ///< the recorded point between events (Sched, asynchronous Signal)
  };
  /// The event being replayed. Heap-held: its PointSearch refers to `e`.
  struct InProgress {
    Event e;
    pid_t rec_tid = 0;
    Goal goal = Goal::None;
    std::unique_ptr<PointSearch> search;  ///< Goal::Point
    /// Goal::Point found for an asynchronous signal: its records are all used, and the
    /// buffer's position goes back to 0 (buffer_reached) when the signal is delivered
    /// (on_signal), so that the stop at its arrival still shows the point's memory.
    bool buffer_at_delivery = false;
  };
  /// The answer run() waits for, to the step it returned last.
  enum class Await : uint8_t { Nothing, Request, Claim, PauseAck, Patch };

  ReplayTask& task_for(const Event& e);
  ReplayTask& cur_task() { return tasks_.at(cur_->rec_tid); }
  std::string where(const Event& e) const;
  /// The error for a replay that no longer matches the recording at event `e`.
  DivergenceError diverged(const Event& e, const std::string& what) const {
    return DivergenceError("replay diverged at " + where(e) + ": " + what);
  }
  /// Acts on `cmd`, the answer to the step returned last; may return the next step at once.
  std::optional<ReplayStep> answer(const RunCommand& cmd);
  /// Takes the next event and does what comes before its task runs; sets its goal.
  void begin_event();
  /// What stopped `t` (`s`), for a divergence message: "SIGSEGV", "syscall read"...
  static std::string stop_text(const ReplayTask& t, const Stop& s);
  /// Before the Exit event of `t`, killed by signal `sig`: delivers `sig` to the thread of
  /// its group that has it pending (the one that got it when recording, `t` itself or
  /// another), which ends them all, and collects every thread's end (group_end.cpp).
  void deliver_fatal_signal(const ReplayTask& t, int sig);
  /// The process `pid` is dying as a whole (an exit_group, a fatal signal): collects the end
  /// of each of its threads but `except` (threads first, the main thread last: the kernel
  /// reports its end only after theirs, wait(2)), without letting them run: they die in
  /// their stops. Their Exit events find them ended.
  void collect_group_ends(pid_t pid, const ReplayTask* except);
  /// After the main thread `main` was resumed with a signal that ends its process: true once
  /// the kill reached its other threads (or it ended, alone), false when it stopped instead.
  bool await_main_thread_kill(ReplayTask& main);
  /// The task stopped with `s`, a stop that is not the driver's: goes on towards the goal,
  /// or reaches it and applies the event. Throws DivergenceError.
  void on_goal_stop(const Stop& s);
  /// The goal is reached (`s`: the stop that reached it): the rest of the event.
  void apply(const Stop& s);
  ReplayStep step_for(ReplayStep::Kind kind);
  /// Syscall buffering (preload/README.md): the task registered its buffer by the call whose
  /// entry registers are `call` (rewind_register_buffer: buffer, size, the library's
  /// rwd_defer section's start and end, features, fd); its library takes results from the
  /// records from now on.
  void register_buffer(ReplayTask& t, const Registers& call);
  /// Puts e's buffered records in t's buffer, before t runs to e.
  void fill_buffer(ReplayTask& t, const Event& e);
  /// At e's point: the records are used up; the buffer starts again, as when recording.
  void buffer_reached(ReplayTask& t, const Event& e);
  void finish_fork(ReplayTask& t);
  /// A Syscall event whose task stands at its entry.
  void on_syscall(ReplayTask& t, const Event& e);
  /// The first exec (the program started from the saved executable), or a later one whose
  /// task stands at its execve's entry.
  void on_exec(ReplayTask& t, const Event& e);
  /// Whether an execve of `t` ends other threads of its process (execve(2)).
  bool exec_ends_threads(const ReplayTask& t) const;
  /// A living task whose memory `t` (a vfork or CLONE_VM child, vm_parent) shares: its parent,
  /// or another thread of the parent's process; 0 when none is left.
  pid_t memory_sharer(const ReplayTask& t) const;
  /// t stands at its execve's entry with other threads: runs it on, collects the threads it
  /// ends (Exited, with their statuses), gives t the main thread's place in tasks_ when it was
  /// another thread, and waits for the exec's stop. Returns false when that stop is not
  /// PTRACE_EVENT_EXEC (the exec failed).
  bool end_threads_for_exec(ReplayTask& t);
  /// A signal event whose task stopped with its delivery stop `s`.
  void on_signal(ReplayTask& t, const Event& e, const Stop& s);
  void fix_child_tids(ReplayTask& parent, ReplayTask& child, const Event& e, const CloneArgs& args);
  void emulate(ReplayTask& t, const Event& e, Registers regs);
  int64_t execute(ReplayTask& t, const Event& e, const Registers& regs);
  void execute_checked(ReplayTask& t, const Event& e, const Registers& regs);
  void replay_mmap(ReplayTask& t, const Event& e, const Registers& regs);
  void replay_mremap(ReplayTask& t, const Event& e, const Registers& regs);
  /// shmat: attaches the replay's segment (sysv_) at the recorded address, with the recorded
  /// contents; shmctl: emulated, and IPC_RMID drops the replay's segment.
  void replay_sysv_shm(ReplayTask& t, const Event& e, const Registers& regs);
  /// A write-like syscall into /proc/PID/mem (Event::written_memory), after its emulation:
  /// the bytes go into the replayed process. Throws ReplayDiverged when it is not replayed.
  void replay_proc_mem_write(const Event& e);
  /// A change to a file mapped shared (Event::writes_shared_file), after its emulation: the
  /// written bytes, or the new size (and a range fallocate punched or zeroed), go into the
  /// replay's copy of the file, which its mappings show. Throws SystemError.
  void replay_shared_file_change(const Event& e, const Registers& regs);
  /// process_vm_writev: emulated; the bytes it wrote go into the replayed target process.
  void replay_vm_write(ReplayTask& t, const Event& e, const Registers& regs);
  /// ptrace: emulated; a request that changed the recorded tracee (tracee_writes.h) is made
  /// again on the replayed one, from the same arguments and the tracer's same memory.
  void replay_ptrace(ReplayTask& t, const Event& e, const Registers& regs);
  void replay_fork(ReplayTask& t, const Event& e, const Registers& regs);
  void replay_exit(ReplayTask& t, const Event& e, const Registers& regs);
  /// Ends the event in progress (its search first: a trampoline goes out of the code) and
  /// kills every task.
  void kill_all();

  bool root_started_ = false;
  bool trace_events_ = false;
  std::optional<Event> next_;
  bool at_end_ = false;
  std::unique_ptr<InProgress> cur_;
  Await await_ = Await::Nothing;
  Stop last_stop_;         ///< Await::Claim, Await::PauseAck: the stop shown
  Event done_event_;       ///< the event the last EventDone reported
  bool finished_ = false;  ///< the event in progress was applied: EventDone is next
  uint64_t points_ = 0, point_stops_ = 0, points_jump_ = 0, points_int3_ = 0,
           points_breakpoint_ = 0, point_full_digests_ = 0;
  /// Adds one found point to the statistics.
  void count_point(const PointFound& p) {
    ++points_;
    point_stops_ += p.stops;
    point_full_digests_ += p.full_digests;
    points_jump_ += p.method == PointMethod::Jump;
    points_int3_ += p.method == PointMethod::Int3;
    points_breakpoint_ += p.method == PointMethod::Breakpoint;
  }
};

using Replayer = ReplaySession::Impl;

}  // namespace rwd
