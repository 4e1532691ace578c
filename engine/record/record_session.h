// A recording in progress: the session that owns the recorded tasks and the trace writer.
// Internal to engine/record; `record()` (recorder.h) is the entry point.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/os/ptrace_ops.h"
#include "engine/record/file_saver.h"
#include "engine/record/record_task.h"
#include "engine/record/recorder.h"
#include "engine/record/schedule_policy.h"
#include "engine/trace/event.h"
#include "engine/trace/trace_files.h"
#include "engine/trace/trace_writer.h"

namespace rwd {

/// The kernel's ERESTART_RESTARTBLOCK (include/linux/errno.h): the call resumes as
/// restart_syscall.
constexpr int64_t kErestartRestartblock = -516;
/// The kernel's ERESTARTSYS: a syscall a signal or PTRACE_INTERRUPT stopped, restarted.
constexpr int64_t kErestartsys = -512;

/// One recording (rr's RecordSession): the program's task tree under ptrace, the scheduler
/// that lets one task of a process run at a time, and the trace being written. The session
/// loop and scheduling are in record_session.cpp, syscalls in record_syscall.cpp, signals
/// (and rdtsc) in record_signal.cpp.
class RecordSession {
 public:
  explicit RecordSession(const RecordOptions& o) : opts_(o), policy_(o.chaos, o.chaos_seed) {}
  /// Starts the program, records it until its last task ends, and finishes the trace.
  /// Throws as record() says.
  RecordResult run();

 private:
  /// Dispatches the wait status `status` of `t` to the handlers below.
  void handle_stop(RecordTask& t, int status);
  /// A syscall's entry: refused, answered without the kernel, or let run (record_syscall.cpp).
  void on_syscall_entry(RecordTask& t);
  /// Cancels `t`'s syscall at its entry (the kernel never runs it); its exit stop reports
  /// `result` (RecordTask::skip_syscall).
  void answer_syscall(RecordTask& t, int64_t result);
  /// prctl(PR_GET_TSC) and prctl(PR_SET_TSC) at `t`'s entry: answered without the kernel from
  /// the mode the program set (ThreadGroup::tsc_mode); false for other options.
  bool answer_tsc_prctl(RecordTask& t);
  /// ptrace(2) at `t`'s entry, answered without the kernel (rewind is every recorded task's
  /// real tracer): PTRACE_TRACEME makes `t` the emulated tracee of its parent; requests that
  /// name a task no recorded thread traces fail as the kernel fails them (ESRCH, EPERM).
  /// Throws UnsupportedError for what is not emulated yet (attaching to a recorded task, a
  /// tracer's requests that need its tracee stopped) and for tracing a process outside the
  /// recording (ptrace_emulation.cpp).
  void on_ptrace_entry(RecordTask& t);
  /// The thread `tid` ended: the tasks it traced are traced no more (ptrace(2): a tracer's
  /// exit detaches its tracees; a stopped one goes on without the signal it stopped for), or
  /// are killed (PTRACE_O_EXITKILL).
  void forget_tracer(pid_t tid);
  /// Puts the emulated tracee `t` in a ptrace stop of kind `kind` for its tracer, whose wait
  /// reports WSTOPSIG `sig`: out of its address space's turns until its tracer resumes it,
  /// the tracer woken from a wait that reports it and sent SIGCHLD (CLD_TRAPPED) where it has
  /// a handler. Throws UnsupportedError for a tracer outside the recording.
  void stop_for_tracer(RecordTask& t, int sig, TracerStop kind);
  /// At t's syscall entry (true) or after its exit's event: when its tracer follows its
  /// syscalls (PTRACE_SYSCALL), puts it in that syscall stop and returns true.
  bool syscall_stop_for_tracer(RecordTask& t, bool entry);
  /// Resumes the stopped tracee `t` as PTRACE_CONT (or, `syscalls`, PTRACE_SYSCALL) from the
  /// tracer process `tracer_pid` with signal `sig` does (0: the signal it stopped for is
  /// discarded; another than it comes with the tracer's SI_USER siginfo).
  void resume_tracee(RecordTask& t, int sig, bool syscalls, pid_t tracer_pid);
  /// When a stop of a tracee of `waiter`'s process is unreported and its pending wait4 or
  /// waitid (at `waiter.entry`) asks for it: writes the wait's status (and rusage, siginfo)
  /// into waiter's memory, marks the stop reported (unless WNOWAIT) and returns the syscall's
  /// result (wait(2)); nullopt otherwise.
  std::optional<int64_t> tracer_wait_answer(RecordTask& waiter);
  /// Delivers `sig`, a fault of t's own instruction, with its Signal event (synchronous).
  void deliver_fault(RecordTask& t, int sig, const SigInfo& si);
  /// A syscall's exit: its event, with result and out-parameters (record_syscall.cpp).
  void on_syscall_exit(RecordTask& t);
  /// PTRACE_EVENT_FORK/VFORK/CLONE: the fork-like syscall's event and the new task.
  void on_fork_event(RecordTask& t, int event);
  /// PTRACE_EVENT_STOP: a new task's first stop, or a preemption's interrupt.
  void on_event_stop(RecordTask& t);
  /// Ends the time slice of `t`, the running task of its process, stopped in user code while
  /// another waits: a Sched event, and the next task runs. Inside a string instruction or
  /// the preload library's code `t` runs on instead (the next tick interrupts it again).
  void preempt(RecordTask& t);
  /// A signal-delivery stop: recorded, deferred or delivered (record_signal.cpp).
  void on_signal(RecordTask& t, int sig);
  /// When `t` stopped just after a buffered call's syscall that a signal or an interrupt
  /// stopped while it waited, makes the call return RWD_ABORTED instead of restarting, so
  /// that the library makes it again as a traced syscall (rewind_preload_abi.h), and returns
  /// true. The caller resumes `t`.
  bool abort_waiting_call(RecordTask& t);
  /// `t` ended with wait status `status`: its Exit event, and the next task of its process runs.
  void on_exit(RecordTask& t, int status);
  /// `t`'s execve succeeded: the kernel ended every other thread of its process (execve(2)).
  /// Writes their Exit events, in member order, with the statuses the kernel reported (it
  /// reports each before the exec's stop: fs/exec.c de_thread waits for them), and leaves t
  /// the only member.
  void end_other_threads(RecordTask& t);
  /// Whether a task of t's process other than t is inside an execve.
  bool exec_in_progress(const RecordTask& t);
  /// PTRACE_EVENT_EXEC of `t`: when another thread made the call, it has t's tid now (the
  /// process's pid); its record takes the place of the main thread's. Returns the task that
  /// exec'ed.
  RecordTask& take_exec_event(RecordTask& t);
  /// The SIGALRM tick: flushes the trace, ends time slices, notices blocked syscalls.
  void on_tick();
  /// Interrupts the running task of each address space whose time slice is over while another
  /// waits; at each tick, and when a task's CPU-time slice signals its end (kSliceSignal).
  void end_slices();
  /// Starts `t`'s time slice now: of ticks, and in chaos mode of its CPU time too.
  void start_slice(RecordTask& t);
  /// Whether `t`'s time slice is over: its ticks, or in chaos mode its CPU time
  /// (task_cpu_clock.h), whichever ran out first.
  bool slice_over(const RecordTask& t) const;
  /// Takes task `tid` out of its process (members) and its address space's turns (tasks,
  /// ready queue); returns whether it was the one running, whose turn someone else must now
  /// get.
  bool leave_turns(ThreadGroup& g, pid_t tid);
  /// After t's exec: t's process leaves the address space it shared (with a process created
  /// with CLONE_VM) for a new one of its own, in which t runs; the others take turns without
  /// it. Its syscall buffers' exclusions and library switch stay with the old one.
  void take_new_space(RecordTask& t);
  /// After a clone with CLONE_VM but not CLONE_THREAD or CLONE_VFORK: turns
  /// librewind_preload.so off in the shared memory (rwd_buffer_header::library_switch), since
  /// the child runs with its parent's thread-local buffer and desched counter; every syscall
  /// of that memory is traced from then on. The write is `e`'s memory, which replay makes too.
  void switch_library_off(RecordTask& t, Event& e);
  /// At the registration of t's buffer at `buffer` (RWD_FEATURE_SWITCH): notes where the
  /// library's switch is (rwd_buffer_header::library_switch).
  void note_library_switch(RecordTask& t, uint64_t buffer);
  /// The first process ended and --wait was not given: kills every task left (a daemon the
  /// program started), saying so on stderr; their ends are recorded as their stops come.
  void kill_the_rest();
  /// Resumes `t` into user code (delivering `sig`), starting its time slice.
  void run_user(RecordTask& t, int sig = 0);
  /// When no task of `s` runs user code, picks the next ready one (SchedulePolicy) and runs it.
  void schedule(AddressSpace& s);
  /// Delivers `sig` with siginfo `si` to the stopped task `t` as its Signal event, at the
  /// first instruction from here where replay's trampoline fits (single steps, or a
  /// breakpoint after a string instruction: at most kMaxSignalHops); while t is in a string
  /// instruction's hop, puts the signal off to its end too.
  void deliver_signal(RecordTask& t, int sig, const SigInfo& si);
  /// Keeps `sig` (with `si`) in t.put_off, to be sent again by send_put_off; a standard
  /// signal already kept and not yet sent takes this one in, as the kernel merges a pending
  /// standard signal (signal(7)).
  void put_off_signal(RecordTask& t, int sig, const SigInfo& si);
  /// A signal that stopped t where it could not be delivered: put off (put_off_signal), or,
  /// where the recorder had sent it again (sent_by_this_process), put off once more with
  /// the siginfo it first came with.
  void take_back_put_off(RecordTask& t, int sig, const SigInfo& si);
  /// Sends t's put-off signals that are not yet sent (tgkill); on_signal gives each its
  /// first siginfo back when it arrives.
  void send_put_off(RecordTask& t);
  /// A timer's expiry (is_timer_expiry) that arrives at `t` before t.timer_free_at is held
  /// back until then, and one that arrives while an expiry of the same signal is held merges
  /// with it, as the kernel merges a pending standard signal's (signal(7)). The kernel's
  /// timers count real time, and the recorder takes milliseconds to deliver each signal (its
  /// point's digest): a 1 ms timer left a thread no time to run between its handlers (an
  /// endless stream of SIGALRM at one instruction). True when held (the caller resumes `t`
  /// without it).
  bool hold_timer_expiry(RecordTask& t, int sig, const SigInfo& si);
  /// Sends every held expiry whose time has come again to its task (as a put-off signal,
  /// RecordTask::put_off), and arms the one-shot timer for the next one where no periodic tick
  /// runs.
  void release_held_expiries();
  /// Delivers e.signo to the stopped task and writes `e`, with the handler's signal frame.
  void deliver_and_write(RecordTask& t, Event& e);
  /// A Signal event for `t` at its current registers.
  Event signal_event(RecordTask& t, int sig, const SigInfo& si);
  /// Writes a SyscallEntry event for each task of `s` but `except` waiting in a syscall.
  void mark_entries(AddressSpace& s, pid_t except);
  /// Writes the SyscallEntry event of `t`, which stands at the entry of its syscall (t.entry),
  /// and notes it (RecordTask::entry_marked).
  void mark_entry(RecordTask& t);
  /// Makes `t` the task of `s` that runs user code (after mark_entries).
  void activate(AddressSpace& s, RecordTask& t);
  /// Fills e's digest and exclusions at t's current point. Returns false when t's process
  /// started dying meanwhile (SIGKILL from outside: exiting threads write their tid words,
  /// so the digest may hold memory no replay reproduces); the event must not be written.
  bool set_point(Event& e, RecordTask& t);
  /// The vfork parent of `child` (which exec'ed or ended) may run again.
  void release_vfork_parent(pid_t child);
  /// Ticks periodically while some address space has several tasks, else only to flush.
  void update_timer();
  /// `t` faulted on rdtsc/rdtscp (PR_SET_TSC) or on the stand-in of one or of a cpuid
  /// (insn_patch.h): runs it here and writes its Rdtsc or Cpuid event. Returns false when the
  /// instruction at rip is none of them.
  bool emulate_insn(RecordTask& t, Registers& regs);
  /// Whether fd `fd` of `tid` is rewind's stdout or stderr (its writes are output to replay).
  OutputStream output_target(pid_t tid, uint64_t fd);
  /// Writes `e`, with the buffered records its task made before it.
  void write(Event& e);
  /// Moves the records in t's buffer to t.buffered (at a stop that an event of t follows).
  void take_buffered(RecordTask& t);
  /// Single-steps t out of the code where no point may be recorded (syscall buffering).
  void step_out_of_buffer_code(RecordTask& t);
  /// Runs t one instruction (PTRACE_SINGLESTEP) and waits for it; the desched counter's and
  /// chaos slices' signals that stop it first are dropped. Returns the wait status of the
  /// stop: SIGTRAP once the instruction has run, or whatever stopped or ended t first.
  int step_insn(RecordTask& t);
  ThreadGroup& group(const RecordTask& t) { return groups_[t.pid]; }
  /// The address space `t` runs in, with its turns.
  AddressSpace& space(const RecordTask& t) { return *groups_[t.pid].space; }
  /// Each address space of the recording once.
  std::vector<AddressSpace*> spaces();
  /// Resumes t: into the rest of its syscall (PTRACE_SYSCALL, for the exit stop), or into user
  /// code: PTRACE_CONT when the seccomp filter reports syscalls, else PTRACE_SYSCALL.
  void resume_syscall(RecordTask& t, int sig = 0) {
    resume(t.tid, seccomp_ && t.state != RunState::InSyscall ? PTRACE_CONT : PTRACE_SYSCALL, sig);
  }

  RecordOptions opts_;
  SchedulePolicy policy_;
  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<FileSaver> saver_;
  std::map<pid_t, RecordTask> tasks_;
  std::map<pid_t, ThreadGroup> groups_;
  std::map<pid_t, int> early_stops_;  ///< stops of new tasks seen before their clone event
  std::map<pid_t, ProcessInfo> processes_;
  std::vector<pid_t> process_order_;
  pid_t root_ = 0;
  int root_status_ = 0;
  bool root_ended_ = false;   ///< the first process's first thread has ended
  bool rest_killed_ = false;  ///< the processes the first one left running were killed
  uint64_t ticks_ = 0;
  uint64_t last_flush_tick_ = 0;
  bool periodic_ = false;     ///< the timer ticks every policy_.tick_us()
  bool flush_armed_ = false;  ///< the one-shot flush timer is armed
  uint64_t preemptions_ = 0;
  uint64_t put_off_preemptions_ = 0;  ///< preempt() waited a tick for a trampoline's place
  uint64_t put_off_signals_ = 0;      ///< signals deliver_signal put off to a later instruction
  uint64_t branch_steps_ = 0;         ///< single steps deliver_signal made past a branch
  uint64_t held_expiries_ = 0;        ///< timer expiries hold_timer_expiry held back or merged
  /// The earliest timer_free_at of a task holding an expiry; nullopt when none holds one.
  std::optional<std::chrono::steady_clock::time_point> next_release_;
  bool cpu_clocks_ = true;  ///< chaos mode: TaskCpuClock opened so far (false after a refusal)
  uint64_t ptrace_stops_ = 0;
  uint64_t buffered_syscalls_ = 0;
  uint64_t aborted_calls_ = 0;
  /// What rewind's stdout and stderr are (RecordSetup): writes to them are the output.
  std::optional<struct stat> stdout_st_, stderr_st_;
  bool seccomp_ = false;  ///< syscall buffering: the filter traps syscalls (PTRACE_CONT runs)
};

}  // namespace rwd
