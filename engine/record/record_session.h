// A recording in progress: the session that owns the recorded tasks and the trace writer.
// Internal to engine/record; `record()` (recorder.h) is the entry point.
#pragma once

#include <linux/filter.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/arch/clone_args.h"
#include "engine/arch/syscall_table.h"
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
/// The kernel's ERESTARTNOHAND: pause(2) ended by a signal or PTRACE_INTERRUPT.
constexpr int64_t kErestartnohand = -514;

/// How long written events may wait in memory before they are flushed while no timer ticks
/// (crash safety), in microseconds.
constexpr long kFlushAfterUs = 50'000;

/// One recording (rr's RecordSession): the program's task tree under ptrace, the scheduler
/// that lets one task of a process run at a time, and the trace being written. The session
/// loop is in record_session.cpp, the turns and time slices of the scheduler in
/// record_turns.cpp, syscalls in record_syscall.cpp, signals (and rdtsc) in
/// record_signal.cpp.
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
  /// prctl(PR_GET_SECCOMP) at `t`'s entry when rewind's filter is the only one acting on `t`:
  /// answered 0 (seccomp off), as natively; prctl(PR_GET_NO_NEW_PRIVS): answered with the
  /// program's own setting (RecordTask::no_new_privs), rewind having set the bit for its
  /// filter; false otherwise (program_filter.cpp).
  bool answer_seccomp_prctl(RecordTask& t);
  /// At the entry of a call that installs a filter of the program's own (seccomp(2)
  /// SECCOMP_SET_MODE_FILTER, prctl(2) PR_SET_SECCOMP): makes the kernel install it behind a
  /// test that lets the preload library's privileged stubs pass (rewind_preload_abi.h), from
  /// a copy on `t`'s stack; unwrap_program_filter puts the stack and rdx back at the exit.
  /// Leaves calls the kernel fails (EFAULT, EINVAL) as they are.
  void wrap_program_filter(RecordTask& t);
  /// At the exit of a call wrap_program_filter changed: the stack's bytes and rdx as at entry
  /// (`regs`, the exit's registers, updated).
  void unwrap_program_filter(RecordTask& t, Registers& regs);
  /// ptrace(2) at `t`'s entry, answered without the kernel (rewind is every recorded task's
  /// real tracer): PTRACE_TRACEME makes `t` the emulated tracee of its parent; requests that
  /// name a task no recorded thread traces fail as the kernel fails them (ESRCH, EPERM).
  /// Throws UnsupportedError for what is not emulated yet (some single steps, seccomp stops)
  /// and for tracing a process outside the recording (ptrace_emulation.cpp).
  void on_ptrace_entry(RecordTask& t);
  /// The recorded task that task `viewer` knows by `number` in its PID namespace (pid_seen_by);
  /// 0 when none. A viewer in rewind's namespace names tasks by rewind's numbers: `number`.
  pid_t recorded_task_named(pid_t viewer, pid_t number);
  /// At t's PTRACE_EVENT_SECCOMP from the program's own filter (its SECCOMP_RET_DATA `data`
  /// is not kRecorderSeccompData): does what the filter's action was before
  /// rewrite_program_actions made it a trace stop (seccomp(2)): SECCOMP_RET_ERRNO fails the
  /// call unrun with that errno; SECCOMP_RET_TRAP skips it and sends SIGSYS as it returns;
  /// SECCOMP_RET_TRACE, with no tracer asking for seccomp stops, fails it with ENOSYS. A
  /// buffered call of the preload library is skipped with the result its record keeps, or,
  /// trapped, given up so that the library makes it traced (program_filter.cpp).
  void on_program_seccomp_trace(RecordTask& t, uint32_t data);
  /// In a program's filter `code`: makes each SECCOMP_RET_ERRNO, SECCOMP_RET_TRAP and
  /// SECCOMP_RET_TRACE a trace stop of its own (SECCOMP_RET_TRACE with a data number,
  /// program_actions_); with `redirect_notif`, each SECCOMP_RET_USER_NOTIF a jump to a tail it
  /// appends, which notifies for a call made from RWD_TRAP_SYSCALL_INSN and makes a trace stop
  /// (kUserNotifData) for any other.
  void rewrite_program_actions(std::vector<sock_filter>& code, bool redirect_notif);
  /// At t's trace stop for a call its filter sends to a supervisor (SECCOMP_RET_USER_NOTIF):
  /// a buffered call is given up (the library makes it traced); a traced one is skipped and
  /// made again from RWD_TRAP_SYSCALL_INSN, where the filter notifies, and the kernel waits
  /// for the supervisor's answer (seccomp_unotify(2)) with the task off its turn. Its event
  /// is the call's where the program made it (RecordTask::user_notif).
  void redirect_user_notif(RecordTask& t);
  /// At a syscall stop of a call redirect_user_notif moved: true when it handled the stop
  /// (the skipped call's exit: the call is made again; the new call's entry: it goes on).
  /// At the new call's exit, puts back the program's own registers and returns false, and
  /// the exit is recorded as the call's.
  bool user_notif_stop(RecordTask& t, bool entry);
  /// At a signal's stop of `t` (`sig`, `si`) before the call redirect_user_notif moved is made
  /// again: puts it off until that call's entry, which it interrupts; true when it did.
  bool notify_signal_before_stub(RecordTask& t, int sig, const SigInfo& si);
  /// At t's desched stop (the counter was enabled by the library: `was_armed`): notes in
  /// t.rearm_desched whether the buffered call it was enabled for is still to be made.
  void note_desched_before_call(RecordTask& t, bool was_armed);
  /// PTRACE_ATTACH (`seize` false) or PTRACE_SEIZE of the recorded `tracee` by `t`, at t's
  /// entry: `t` becomes its emulated tracer; a seized task in a group-stop stops for it at
  /// once, an attached one is sent SIGSTOP (ptrace(2)). Throws UnsupportedError for a
  /// PTRACE_ATTACH of a task in a group-stop.
  void attach(RecordTask& t, RecordTask& tracee, bool seize);
  /// PTRACE_SETOPTIONS' (and PTRACE_SEIZE's) `options` for `tracee`: 0, or -EINVAL for bits
  /// the kernel does not know. Throws UnsupportedError, naming the request `name`, for
  /// options not emulated (PTRACE_O_TRACESECCOMP, PTRACE_O_SUSPEND_SECCOMP).
  int64_t set_tracer_options(RecordTask& tracee, uint64_t options, const std::string& name);
  /// The thread `tid` ended: the tasks it traced are traced no more (ptrace(2): a tracer's
  /// exit detaches its tracees; a stopped one goes on without the signal it stopped for), or
  /// are killed (PTRACE_O_EXITKILL).
  void forget_tracer(pid_t tid);
  /// Puts the emulated tracee `t` in a ptrace stop of kind `kind` for its tracer, whose wait
  /// reports WSTOPSIG `sig` and PTRACE_EVENT_* `event` (status bits 16-23): out of its
  /// address space's turns until its tracer resumes it, the tracer woken from a wait that
  /// reports it and sent SIGCHLD (CLD_TRAPPED) where it has a handler. Throws
  /// UnsupportedError for a tracer outside the recording.
  void stop_for_tracer(RecordTask& t, int sig, TracerStop kind, int event = 0);
  /// Tells the tracer thread of `tracee` that it changed state (SIGCHLD's si_code `code`,
  /// si_status `status`, si_pid its tid as the tracer knows it): the tracer's waits blocked in
  /// the kernel are interrupted (answered at their exit), and SIGCHLD is sent where a handler
  /// takes it (kernel/signal.c do_notify_parent_cldstop, do_notify_parent).
  void notify_tracer(const RecordTask& tracee, int code, int status);
  /// `t` ended with wait status `status`: when its emulated tracer would see that and the
  /// kernel would not tell it (tracee_exits_), keeps it for its tracer's wait.
  void report_exit_to_tracer(const RecordTask& t, int status);
  /// t's exit_group goes on (its event written), or a signal whose default action ends the
  /// process is delivered to it: its thread group's other threads die at it from now on
  /// (group_exit.cpp).
  void start_group_exit(RecordTask& t);
  /// A stop (wait status `status`, not an end) of `t` while its thread group's exit_group
  /// runs: a thread the kernel is killing is held where it stopped, with no event, and
  /// returns true, since replay's exit_group kills its copy where its last event left it
  /// (exit_group(2): every thread of the process ends). A stop of the exiting thread itself
  /// means the call returned after all: the held stops are handled as they come next.
  bool hold_during_group_exit(RecordTask& t, int status);
  /// At the entry of t's exit or exit_group: when its tracer set PTRACE_O_TRACEEXIT, puts it
  /// in its PTRACE_EVENT_EXIT stop (once) and returns true.
  bool exit_stop_for_tracer(RecordTask& t);
  /// After t's successful execve's event: the stops its tracer sees there (ptrace(2),
  /// "execve(2) under ptrace"): PTRACE_EVENT_EXEC with PTRACE_O_TRACEEXEC, else a SIGTRAP
  /// unless it was seized; and the syscall-exit-stop under PTRACE_SYSCALL, before the SIGTRAP
  /// and after the event stop. Returns whether it stopped.
  bool exec_stops_for_tracer(RecordTask& t);
  /// Takes `t` out of its address space's turns (a stop for its tracer, a group-stop); the
  /// next task runs if `t` was running.
  void leave_turns(RecordTask& t);
  /// PTRACE_EVENT_STOP with the stop signal `sig` of a task that was not listening: its
  /// process stops (signal(7)). Held out of its turns with a real PTRACE_LISTEN, or stopped
  /// for its emulated tracer (group_stops.cpp).
  void on_group_stop(RecordTask& t, int sig);
  /// PTRACE_EVENT_STOP of a task rewind had listening (a SIGCONT, WSTOPSIG SIGTRAP, or a
  /// PTRACE_INTERRUPT): back in its turns, or stopped for its tracer after its PTRACE_LISTEN.
  void on_listen_end(RecordTask& t, int sig);
  /// Ends rewind's PTRACE_LISTEN on `t` (PTRACE_INTERRUPT, then its PTRACE_EVENT_STOP, waited
  /// for here), so that ptrace requests reach it; it stays stopped. Throws UnsupportedError
  /// when it ended instead.
  void end_listen(RecordTask& t);
  /// Handles the stop of `t` that the kernel holds for rewind, if any (waitpid WNOHANG), before
  /// rewind's loop gets to it: so that what another process saw of it (its parent's wait)
  /// is known here too. `t` may have ended then (gone from tasks_).
  void take_pending_stop(RecordTask& t);
  /// Whether t's group-stop is over: SIGCONT came (pending for it or its process: a stop
  /// signal discards a pending SIGCONT, signal(7)), or there is none.
  bool group_stop_over(const RecordTask& t);
  /// When t's group-stop is not over, holds it there with a real PTRACE_LISTEN (from a
  /// PTRACE_EVENT_STOP: a group-stop or interrupt stop), out of any stop for its tracer, and
  /// returns true.
  bool hold_group_stop(RecordTask& t);
  /// Makes a real PTRACE_LISTEN on `t`, stopped at a PTRACE_EVENT_STOP: it stays stopped,
  /// out of any stop for its tracer, until SIGCONT or a PTRACE_INTERRUPT ends that
  /// (on_listen_end). Returns false, errno set, when the kernel refused it.
  bool start_listening(RecordTask& t);
  /// Forgets t's emulated tracer and everything it set (a detach, its tracer's end).
  static void untrace(RecordTask& t);
  /// At the exit of t's write-like syscall, event `e`, into a file of /proc: when it wrote
  /// into /proc/PID/mem of a recorded process, keeps the bytes in e (Event::written_memory)
  /// for replay to write again. Throws UnsupportedError where replay could not make it at
  /// the same point (the target's tasks run: proc_mem_writes.cpp).
  void note_proc_mem_write(RecordTask& t, Event& e);
  /// At t's write-like syscall entry into /proc/PID/mem of a process of another memory: holds
  /// that memory still (AddressSpace::held_for_write): marks the entries of its tasks that
  /// wait in syscalls, and when one of its tasks runs, asks for its preemption and returns
  /// true: t waits at its entry until start_held_write resumes it. False when t goes on now
  /// (held or not).
  bool hold_for_proc_mem_write(RecordTask& t, const struct stat& st);
  /// Whether the file open as `fd` in task `tid`, of stat `st`, is on a procfs: rewind's /proc,
  /// or one the program mounted (statfs(2): PROC_SUPER_MAGIC; one statfs per device).
  bool on_procfs(pid_t tid, int fd, const struct stat& st);
  /// The recorded task (rewind's tid) whose memory t's write-like call at its entry writes
  /// through its descriptor (argument 0), of stat `st`: a /proc/N/mem or /proc/N/task/M/mem
  /// file, N read as rewind does in rewind's /proc, and as t's PID namespace does in another
  /// procfs (one the program mounted there). 0 for another file or a task not recorded; a
  /// number of rewind's /proc that no recorded task has is returned as it is.
  pid_t proc_mem_task(const RecordTask& t, const struct stat& st);
  /// Holds the memory `held` (of other turns than t's) still for t's syscall, which stands
  /// at its entry: none of its tasks is scheduled until release_written_space(t), those
  /// waiting in syscalls get their entries' events, and its running task is preempted at its
  /// next point (a Sched event). With `past_syscalls`, one in a prompt syscall (not known to
  /// block) is waited for too, until it gives up its turn at the syscall's exit, so that no
  /// task of `held` has the turn when t's call ends. Returns true when t must wait at its
  /// entry for that (start_held_write resumes it), false when t goes on now: nothing there
  /// runs user code, or another task holds that memory already (then t holds nothing:
  /// t.written_space stays null).
  bool hold_space(RecordTask& t, std::shared_ptr<AddressSpace> held, bool past_syscalls);
  /// At the entry of t's mmap of a file MAP_SHARED, shmat, or mprotect adding PROT_WRITE to
  /// a shared mapping: when a process of other turns maps the same memory shared, with write
  /// access on one side or the other, holds it (hold_space) so that t's call and the
  /// contents it records see that process at an event, and notes it in t.joins_turns; at the
  /// exit join_shared_turns merges their turns. Returns whether t waits at its entry
  /// (shared_mappings.cpp).
  bool hold_for_shared_mapping(RecordTask& t);
  /// At the exit of the call hold_for_shared_mapping held memory for, after its event: when
  /// it succeeded, t's turns and the held memory's become one (Turns): their tasks run one
  /// at a time from now on, preempted at recorded points, as threads are.
  void join_shared_turns(RecordTask& t, int64_t result);
  /// Called by schedule() when no task of `s` runs while it is held: resumes the write that
  /// waits for that, if any.
  void start_held_write(AddressSpace& s);
  /// After t's write's event (or t's end): the memory it held is scheduled again.
  void release_written_space(RecordTask& t);
  /// The tracer's PTRACE_POKEUSER of debug register `dr` of `tracee` (tracer_debug_registers.cpp):
  /// made on the real task, where the CPU watches for the tracer, and kept for its reads.
  /// Returns 0 or -errno as the kernel answers it; throws UnsupportedError (naming `name`)
  /// for a DR7 that enables a slot where the CPU's debug registers do not stop programs, or
  /// while the recorder holds slot 0 for a put-off signal.
  int64_t debug_register_write(RecordTask& tracee, int dr, uint64_t value, const std::string& name);
  /// The tracer's PTRACE_INTERRUPT of `tracee`, which runs (tracer_interrupts.cpp): asks the
  /// kernel to interrupt the real task; its stop for its tracer comes at its first stop where
  /// replay's copy can stand (interrupt_stop_after_syscall, interrupt_stop_in_user_code).
  void interrupt_for_tracer(RecordTask& tracee);
  /// At t's syscall exit, once its event is written: when its tracer's interrupt waits, t stops
  /// for it there (PTRACE_EVENT_STOP) and true is returned.
  bool interrupt_stop_after_syscall(RecordTask& t);
  /// At t's PTRACE_EVENT_STOP in user code: when its tracer's interrupt waits, t stops for it
  /// at a point of its own (a Sched event), or goes on where no point may be; returns false
  /// when no interrupt of its tracer's waits (the stop is rewind's own).
  bool interrupt_stop_in_user_code(RecordTask& t);
  /// Each tick: asks the kernel again to interrupt the tracees whose tracer's interrupt still
  /// waits and that run user code or wait in a syscall.
  void retry_tracer_interrupts();
  /// Whether t's tracer has slot 0 of its debug registers enabled (the recorder then puts off
  /// signals with an int3 rather than with that slot).
  static bool tracer_slot0_armed(const RecordTask& t);
  /// At t's SIGTRAP with si_code TRAP_HWBKPT: when a slot its tracer armed fired, notes the
  /// status its tracer reads (DR6); returns true when the hit is to be dropped (a write by
  /// the preload library, which natively is the kernel's and stops no one), false when it is
  /// another stop (the tracer's Fault stop follows, or not the tracer's slot at all). Throws
  /// UnsupportedError for a slot armed by a tracer that is gone.
  bool dismiss_tracer_watch_hit(RecordTask& t);
  /// Where t's tracer has a debug-register slot on: keeps DR6 as the kernel has it now (which
  /// slots fired, the single-step bit) for the tracer's reads of it.
  static void note_tracer_debug_status(RecordTask& t);
  /// Throws UnsupportedError (naming `name`, the request) where the tracer's
  /// PTRACE_SINGLESTEP (or PTRACE_SYSEMU_SINGLESTEP: `request`) of `tracee` with `sig`
  /// cannot be recorded: from an event's or a seccomp stop, with a stop signal or (from a
  /// syscall stop) any signal, over `int 0x80` or `sysenter`, or over a syscall that execs or
  /// forks or is the preload library's untraced one. Returns true for a step over another
  /// `syscall` instruction, or from a syscall's entry stop (the call recorded as a syscall,
  /// the step ending after it).
  bool check_single_step(const RecordTask& tracee, long request, int sig, const std::string& name);
  /// Runs t's next instruction for its tracer's PTRACE_SINGLESTEP (a real single step): the
  /// SIGTRAP after it is a stop for the tracer (TracerStop::Step, a point of t's), whatever
  /// came first (a fault, a signal, its end) is handled as any stop.
  void step_for_tracer(RecordTask& t);
  /// After t's vfork child `child` (rewind's tid) exec'd or ended: when its tracer asked
  /// for PTRACE_O_TRACEVFORKDONE, puts t in that event stop and returns true (ptrace(2)).
  bool vfork_done_stop(RecordTask& t, pid_t child);
  /// At t's syscall entry (true) or after its exit's event: when its tracer follows its
  /// syscalls (PTRACE_SYSCALL), puts it in that syscall stop and returns true. The preload
  /// library's own calls (RecordTask::library_call) have none.
  bool syscall_stop_for_tracer(RecordTask& t, bool entry);
  /// At t's syscall entry, after its syscall-enter-stop if any: when its own filter said
  /// SECCOMP_RET_TRACE and its tracer set PTRACE_O_TRACESECCOMP (RecordTask::seccomp_stop_due),
  /// puts it in its PTRACE_EVENT_SECCOMP stop, the filter's data as the event's message, and
  /// returns true (seccomp(2), ptrace(2)).
  bool seccomp_stop_for_tracer(RecordTask& t);
  /// Before t's stop for its tracer at its syscall entry (t.entry read): writes, once per
  /// call, its buffered records and a SyscallEntry event, which brings replay's copy to that
  /// entry before the tracer's next calls (that may read or change it there); on_syscall_entry
  /// goes on with the call when the tracer resumes it (RecordTask::entry_reported).
  void report_entry(RecordTask& t);
  /// Keeps t's desched counter (its buffer's registration) among its process's descriptors
  /// that listings of /proc/PID/fd do not show (ThreadGroup::counter_fds).
  void note_counter_fd(RecordTask& t);
  /// What t's current getdents64 or getdents lists, where it is a recorded process's
  /// /proc/PID/fd (or /proc/PID/task/TID/fd) directory while that process has desched
  /// counters: the directory's task and those counters' descriptors (hidden_fds.cpp).
  struct ListedCounters {
    pid_t owner = 0;
    const std::set<int>* counters = nullptr;  ///< nullptr: not such a listing
  };
  ListedCounters listed_counters(const RecordTask& t);
  /// At the entry of t's getdents64 or getdents of a recorded process's /proc/PID/fd (or
  /// /proc/PID/task/TID/fd) directory, while that process has desched counters: keeps the
  /// buffer's bytes (RecordTask::listing_before, at most kMaxListingCopy bytes).
  void note_listing_buffer(RecordTask& t);
  /// At the exit of such a call, `result` bytes long: removes the entries of desched
  /// counters from the listing in t's memory (the buffer's bytes from before the call after
  /// the rest, zeros where none were kept) and returns the new result in bytes; nullopt when
  /// nothing was hidden (hidden_fds.cpp).
  std::optional<int64_t> hide_counter_fds(RecordTask& t, int64_t result);
  /// When every entry was hidden: puts the buffer back as it was at the entry and makes t's
  /// call again from its syscall instruction, with no event for this one (`regs`: its
  /// registers at the exit stop). Past the copy's end (a buffer over kMaxListingCopy bytes
  /// full of counters' entries) the buffer holds zeros, which replay's does not.
  void list_again(RecordTask& t, Registers& regs);
  /// True if the syscall t.entry (t at its entry) is the preload library's own: its
  /// registration, which names the buffer's size and code inside the library (a program's
  /// own syscall(1000, ...) does not), or RWD_SYS_PATCHED after a registration announcing it
  /// (rewind_preload_abi.h). Reads /proc/PID/maps for a registration.
  bool library_call_at_entry(const RecordTask& t) const;
  /// Resumes the stopped tracee `t` as PTRACE_CONT (or, `syscalls`, PTRACE_SYSCALL) from the
  /// tracer process `tracer_pid` with signal `sig` does (0: the signal it stopped for is
  /// discarded; another than it comes with the tracer's SI_USER siginfo).
  void resume_tracee(RecordTask& t, int sig, bool syscalls, pid_t tracer_pid);
  /// When a stop of a tracee of `waiter`'s process is unreported and its pending wait4 or
  /// waitid (at `waiter.entry`) asks for it: writes the wait's status (and rusage, siginfo)
  /// into waiter's memory, marks the stop reported (unless WNOWAIT) and returns the syscall's
  /// result (wait(2)); nullopt otherwise.
  std::optional<int64_t> tracer_wait_answer(RecordTask& waiter);
  /// Whether the pending wait4 or waitid of `waiter` (no WNOHANG) names an emulated tracee of
  /// its process and none of its real children: the kernel would fail it (ECHILD) where it
  /// waits natively, until that tracee stops or ends (ptrace(2)).
  bool tracer_wait_must_block(const RecordTask& waiter);
  /// Delivers `sig`, a fault of t's own instruction, with its Signal event (synchronous).
  void deliver_fault(RecordTask& t, int sig, const SigInfo& si);
  /// A syscall's exit: its event, with result and out-parameters (record_syscall.cpp).
  void on_syscall_exit(RecordTask& t);
  /// PTRACE_EVENT_FORK/VFORK/CLONE: the fork-like syscall's event and the new task.
  void on_fork_event(RecordTask& t, int event);
  /// PTRACE_EVENT_STOP with WSTOPSIG `sig`: a new task's first stop, a preemption's interrupt,
  /// a group-stop or the end of rewind's PTRACE_LISTEN.
  void on_event_stop(RecordTask& t, int sig);
  /// Ends the time slice of `t`, the running task of its process, stopped in user code while
  /// another waits: a Sched event, and the next task runs. Inside a string instruction or
  /// the preload library's code `t` runs on instead (the next tick interrupts it again).
  void preempt(RecordTask& t);
  /// Before a preemption names its point at `regs` (t's registers, stopped in user code):
  /// where the next pass of that instruction, within a short loop, comes with the same
  /// registers, steps t on to an instruction of the loop whose registers differ from one
  /// pass to the next, so that replay's trampoline stops there only at the point's own
  /// pass (preemption_point.cpp). Leaves `regs` as t's registers where it now stands.
  /// Returns false when a stop other than a step came (handled; no preemption now). Signals
  /// from outside that came during the steps are put off (step_insn_putting_off): the caller
  /// sends them again (send_put_off), as this does before handling another stop.
  bool step_to_distinct_point(RecordTask& t, Registers& regs);
  /// Before an asynchronous signal `sig` (siginfo `si`) is delivered at `regs` (t's
  /// registers, stopped in user code where a trampoline fits): where the registers there come
  /// back at a later pass of that instruction, steps t on to an instruction whose registers
  /// differ from pass to pass, through calls too (signal_point.cpp). Leaves `regs` as t's
  /// registers where it now stands, and returns how many steps it made (0: t is where it
  /// was); nullopt when a stop other than a step came (handled, with `sig` put off to arrive
  /// after it).
  std::optional<int> step_to_distinct_signal_point(RecordTask& t, Registers& regs, int sig,
                                                   const SigInfo& si);
  /// One single step of `t` for a point search, from `r` (t's registers), when its next
  /// instruction may be stepped (step_kind: not a syscall), is not a string instruction and
  /// lies outside the buffered-syscall primitive (SyscallBuffer::must_not_stop_at); leaves `r`
  /// as the registers after it. False when
  /// it stands still; then `handled` says whether another stop came instead of the step's
  /// (handled here, after `sig`, if not 0, was put off with `si` and the others sent again).
  bool step_for_point(RecordTask& t, Registers& r, bool& handled, int sig = 0,
                      const SigInfo* si = nullptr);
  /// A signal-delivery stop: recorded, deferred or delivered (record_signal.cpp).
  void on_signal(RecordTask& t, int sig);
  /// When `t` stopped just after a buffered call's syscall that a signal or an interrupt
  /// stopped while it waited, makes the call return RWD_ABORTED instead of restarting, so
  /// that the library makes it again as a traced syscall (rewind_preload_abi.h), and returns
  /// true. The caller resumes `t`.
  bool abort_waiting_call(RecordTask& t);
  /// Makes the preload library give up the buffered call `nr` that `t` stands in, with
  /// registers `r` (set in the task with rax RWD_ABORTED): the library makes it traced, and
  /// the task's next event carries the abort mark that replay's library finds.
  void give_up_buffered_call(RecordTask& t, Registers& r, int64_t nr);
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
  /// The preload library's turns switch (rewind_preload_abi.h, RWD_FEATURE_TURNS;
  /// turns_switch.cpp). At the registration of t's buffer at `buffer`: notes where the switch
  /// is, and writes RWD_TURNS_ALONE there, into `memory` too (the registration event's), when
  /// t's memory has no other task taking its turns.
  void note_turns_switch(RecordTask& t, uint64_t buffer, std::vector<MemoryRegion>& memory);
  /// At t's clone event `e` that created `child` with `args` (`copies_turns`: a new process
  /// that shares t's turns through writable shared memory): RWD_TURNS_SHARED into t's memory
  /// where the child runs on it (a thread, a process sharing it; not a vfork child, whose
  /// parent waits) or shares its turns, in `e`'s memory; into the child's memory where it
  /// shares them (RWD_TURNS_SHARED) or is alone in a memory that said shared
  /// (RWD_TURNS_ALONE), as Event::written_memory where that is free. Returns the value the
  /// child's memory holds after the event.
  int32_t turns_at_clone(RecordTask& t, const CloneArgs& args, pid_t child, bool copies_turns,
                         Event& e);
  /// The preload library's descriptor cache (rewind_preload_abi.h, RWD_FEATURE_FD_CACHE;
  /// fd_cache.cpp). At the registration of t's buffer at `buffer`: notes where its switch is.
  void note_fd_cache(RecordTask& t, uint64_t buffer);
  /// At the event `e` of t's traced syscall `nr` (`spec`; only those replayed by emulation)
  /// that returned `result`: a close, close_range, dup2 or dup3 made where the library could not
  /// see it makes it forget every descriptor; an unshare of CLONE_FILES turns the cache off; the
  /// first such event of the last vfork parent after its child turns it on again. The write is
  /// `e`'s memory.
  void fd_cache_after_syscall(RecordTask& t, long nr, const SyscallSpec& spec, int64_t result,
                              Event& e);
  /// Makes the library of t's memory forget every descriptor's class at event `e` (in its
  /// memory), where the cache is on.
  void forget_fd_cache(RecordTask& t, Event& e);
  /// Writes into files that recorded processes map shared (shared_file_writes.cpp). At t's
  /// mmap event `e` of the file at `fd_path` (/proc/TID/fd/N), saved as a shared file: lists
  /// the file in t's library (rwd_shared_files, in `e`'s memory), which then keeps the writes
  /// to it traced.
  void list_shared_file(RecordTask& t, const std::string& fd_path, Event& e);
  /// At t's event `e` of a write-like call (write, pwrite64, writev, pwritev, pwritev2) that
  /// wrote e.result > 0 bytes into the regular file `st` (its stat at the entry): where a
  /// shared mapping of that file was saved, keeps the bytes the call wrote, from t's buffers,
  /// at their file offset (Event::shared_file, Event::written_memory). Throws Error where the
  /// offset cannot be known (the descriptor is gone), SystemError where the buffers cannot be
  /// read.
  void keep_shared_file_write(RecordTask& t, const struct stat& st, Event& e);
  /// At t's event `e` of an ftruncate, truncate or fallocate that succeeded: where a shared
  /// mapping of its file was saved, keeps the file's size after it (Event::shared_file,
  /// Event::written_memory's addr, no bytes).
  void keep_shared_file_size(RecordTask& t, Event& e);
  /// At t's event `e` of a copy_file_range, splice or sendfile that copied e.result > 0 bytes
  /// into a regular file of which a shared mapping was saved: keeps those bytes, read back
  /// from the file, at their offset, as keep_shared_file_write does. Throws Error where the
  /// offset cannot be known, SystemError where the file cannot be read.
  void keep_shared_file_copy(RecordTask& t, Event& e);
  /// At t's clone event `e` that created `child` with `args`: turns the cache off where the
  /// child shares the memory without the descriptor table (until the parent's next event for
  /// a vfork), or the table without the memory (in both, the child's write in
  /// Event::written_memory).
  void fd_cache_at_clone(RecordTask& t, const CloneArgs& args, pid_t child, Event& e);
  /// Sends SIGKILL to every task, held ones included; their ends are recorded as their stops
  /// come, as a kill from outside. Returns how many processes they belong to.
  size_t kill_all_tasks();
  /// The first process ended and --wait was not given: kills every task left (a daemon the
  /// program started), saying so on stderr; their ends are recorded as their stops come.
  void kill_the_rest();
  /// A second SIGTERM or SIGHUP (take_end_request): kills every task, held ones included (a
  /// recording whose tasks wait on each other never ends otherwise), saying so on stderr;
  /// their ends are recorded as their stops come, as a kill from outside.
  void end_on_request();
  /// Resumes `t` into user code (delivering `sig`), starting its time slice.
  void run_user(RecordTask& t, int sig = 0);
  /// When no task of `s` runs user code, picks the next ready one (SchedulePolicy) and runs it.
  void schedule(AddressSpace& s);
  /// Takes the turn from `t`, the active task of its memory, while it stays inside a syscall
  /// that waits: others may run meanwhile (the caller schedules them), and on_syscall_exit
  /// has it wait for a turn again.
  void wait_outside_turns(RecordTask& t);
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
  /// After step_out_of_buffer_code stepped t, which may have run its buffered call: when
  /// that call blocked `sig` (a sigprocmask the signal came just before), puts it off and
  /// sends it again, to wait pending until unblocked, as natively a signal that comes after
  /// the call would; returns true then (t is to be resumed without it). A seccomp SIGSYS is
  /// never blocked.
  bool put_off_if_now_blocked(RecordTask& t, int sig, const SigInfo& si);
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
  /// Writes a Sched event of `t` where it stands stopped in user code (registers `regs`), with
  /// its point and the buffered records it took: replay brings its copy there. Returns false
  /// when t's process was killed meanwhile (its exit comes next), writing nothing.
  bool write_sched_event(RecordTask& t, const Registers& regs);
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
  /// Whether descriptor `fd`, whose file is `st` (stat(2) of /proc/TID/fd/FD), is rewind's
  /// stdout or stderr (its writes are output to replay).
  OutputStream output_target(const struct stat& st, int fd) const;
  /// At `t`'s entry to a write to rewind's stdout or stderr while another task's write to
  /// the same file runs: holds `t` at its entry stop until that one's event is written
  /// (release_output), so that the trace's order of output events is the order the kernel
  /// wrote the bytes in (replay prints them in trace order), and returns true. Otherwise
  /// makes `t` that file's writer in flight where its call writes output, and returns false.
  /// A writer asleep in the kernel (a full pipe) holds nobody: natively the two would race
  /// there too. Notes the file a write-like call writes to in t.write_target. A write into
  /// /proc/PID/mem of another process may be held too (hold_for_proc_mem_write).
  bool hold_output_write(RecordTask& t);
  /// `tid`'s output write has its event, or `tid` ended: the next held writer, if any, runs.
  void release_output(pid_t tid);
  /// Writes `e`, with the buffered records its task made before it.
  void write(Event& e);
  /// Moves the records in t's buffer to t.buffered (at a stop that an event of t follows).
  void take_buffered(RecordTask& t);
  /// Single-steps t out of the code where no point may be recorded (syscall buffering), its
  /// desched counter settled first (it would signal every step's stop); a signal from outside
  /// that comes meanwhile is put off (take_back_put_off). Nothing is done where t is outside.
  /// Returns whether t was inside (and so may have made the buffered call there).
  bool step_out_of_buffer_code(RecordTask& t);
  /// step_insn, with the signals from outside that arrive before the instruction runs put
  /// off (take_back_put_off) and the step made again. Returns the wait status that ends it.
  int step_insn_putting_off(RecordTask& t);
  /// Runs t one instruction (PTRACE_SINGLESTEP) and waits for it; the desched counter's and
  /// chaos slices' signals that stop it first are dropped. Returns the wait status of the
  /// stop: SIGTRAP once the instruction has run, or whatever stopped or ended t first.
  int step_insn(RecordTask& t);
  ThreadGroup& group(const RecordTask& t) { return groups_[t.pid]; }
  /// The address space `t` runs in, with its turns.
  AddressSpace& space(const RecordTask& t) { return *groups_[t.pid].space; }
  /// Each address space of the recording once.
  std::vector<AddressSpace*> spaces();
  /// One address space of each Turns of the recording (those sharing turns with an earlier
  /// one are left out): for what is done once per set of tasks taking turns.
  std::vector<AddressSpace*> turn_takers();
  /// How many tasks take turns with those of `s` (its own included).
  size_t turn_task_count(const AddressSpace& s);
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
  /// Ends of emulated tracees that their tracer's wait reports and the kernel would not (the
  /// tracer is not the parent of their process, or they are not its main thread): ptrace(2).
  struct TraceeExit {
    pid_t tracer = 0;  ///< the tracer thread
    pid_t tid = 0;     ///< the tracee that ended
    pid_t seen = 0;    ///< its tid as the tracer knows it (RecordTask::tid_for_tracer)
    int status = 0;    ///< its wait status
  };
  std::vector<TraceeExit> tracee_exits_;
  std::map<pid_t, int> early_stops_;  ///< stops of new tasks seen before their clone event
  /// Stops held during an exit_group that returned: handled before the next waitpid.
  std::deque<std::pair<pid_t, int>> released_stops_;
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
  uint64_t held_writes_ = 0;          ///< RecordResult::held_writes
  uint64_t joined_turns_ = 0;         ///< RecordResult::joined_turns
  uint64_t put_off_signals_ = 0;      ///< signals deliver_signal put off to a later instruction
  uint64_t branch_steps_ = 0;         ///< single steps deliver_signal made past a branch
  uint64_t point_steps_ = 0;          ///< single steps the point searches made (step_for_point)
  uint64_t moved_points_ = 0;         ///< preemptions and signals moved to where the registers vary
  uint64_t held_expiries_ = 0;        ///< timer expiries hold_timer_expiry held back or merged
  /// The earliest timer_free_at of a task holding an expiry; nullopt when none holds one.
  std::optional<std::chrono::steady_clock::time_point> next_release_;
  bool cpu_clocks_ = true;  ///< chaos mode: TaskCpuClock opened so far (false after a refusal)
  uint64_t ptrace_stops_ = 0;
  uint64_t buffered_syscalls_ = 0;
  uint64_t aborted_calls_ = 0;
  /// The actions (SECCOMP_RET_* with their data) of programs' filters, numbered from 0x6000
  /// in the rewritten filters' trace stops (rewrite_program_actions).
  std::vector<uint32_t> program_actions_;
  /// What rewind's stdout and stderr are (RecordSetup): writes to them are the output.
  std::optional<struct stat> stdout_st_, stderr_st_;
  /// A file behind rewind's stdout or stderr, with the task whose write to it runs and the
  /// tasks held at their writes' entries, in order (hold_output_write).
  struct OutputFile {
    dev_t dev = 0;
    ino_t ino = 0;
    pid_t writer = 0;
    std::deque<pid_t> held;
  };
  std::vector<OutputFile> output_files_;  ///< at most two: stdout's file and stderr's
  /// The device of /proc: a write into one of its files may be one into /proc/PID/mem.
  std::optional<dev_t> proc_dev_;
  std::map<dev_t, bool> procfs_devices_;  ///< on_procfs's answers, by device
  bool seccomp_ = false;  ///< syscall buffering: the filter traps syscalls (PTRACE_CONT runs)
};

}  // namespace rwd
