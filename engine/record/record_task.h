// The recorder's view of one task and of one thread group (rr's RecordTask): what each is
// doing, what its current syscall looks like, and what the recorder holds back for it.
// Internal to engine/record.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "engine/arch/insn.h"
#include "engine/arch/registers.h"
#include "engine/arch/siginfo.h"
#include "engine/os/cpuid_query.h"
#include "engine/os/tracee_memory.h"
#include "engine/record/schedule_policy.h"
#include "engine/record/syscall_buffer.h"
#include "engine/record/syscall_capture.h"
#include "engine/record/task_cpu_clock.h"

namespace rwd {

struct AddressSpace;

/// What a task is doing from the recorder's point of view.
enum class RunState : uint8_t {
  Stopped,      ///< held at a ptrace stop, waiting to run user code (in its process's queue)
  UserRunning,  ///< resumed into user code: its process's active task
  InSyscall,    ///< resumed into a syscall (between its entry and exit stops)
};

/// A signal taken from a task, to be sent to it again (tgkill) and delivered later.
struct PutOffSignal {
  int sig = 0;
  SigInfo si{};       ///< as it first arrived: the handler gets this one (on_signal)
  bool sent = false;  ///< sent again, and not yet arrived
};

/// A task's debug registers as a tracer reads them before it writes any and before any debug
/// exception, and again after an exec: all 0 but DR6, which ptrace gives as the kernel's
/// virtual_dr6 (0) XOR DR6_RESERVED (arch/x86/kernel/ptrace.c ptrace_get_debugreg).
constexpr std::array<uint64_t, 8> kTracerDebugRegistersReset{0, 0, 0, 0, 0, 0, 0xffff0ff0, 0};

/// Why an emulated tracee stands stopped for its tracer (ptrace(2) names each stop).
enum class TracerStop : uint8_t {
  Signal,        ///< signal-delivery-stop of a signal sent to it
  Fault,         ///< signal-delivery-stop of a fault of its own instruction
  Exec,          ///< the SIGTRAP after its execve: no signal is queued, it stands at the exit
  SyscallEntry,  ///< syscall-enter-stop (PTRACE_SYSCALL), before the recorder saw the call
  SyscallExit,   ///< syscall-exit-stop, after the call's event
  Group,         ///< group-stop (a stop signal took its process): PTRACE_EVENT_STOP if seized
  Interrupt,     ///< PTRACE_EVENT_STOP of PTRACE_INTERRUPT, or of SIGCONT ending a PTRACE_LISTEN
  Exit,          ///< PTRACE_EVENT_EXIT at its exit or exit_group entry (PTRACE_O_TRACEEXIT)
  NewTask,       ///< PTRACE_EVENT_FORK, VFORK or CLONE after its fork-like syscall's event
  Step,          ///< the SIGTRAP after one instruction run by PTRACE_SINGLESTEP
  Seccomp,       ///< PTRACE_EVENT_SECCOMP: its own filter's SECCOMP_RET_TRACE (TRACESECCOMP)
};

/// The recorder's state of one task (a thread of a recorded process).
struct RecordTask {
  pid_t tid = 0;
  pid_t pid = 0;  ///< thread group (process) id
  RunState state = RunState::Stopped;
  bool fresh = true;  ///< its first stop (PTRACE_EVENT_STOP) has not been seen
  Registers entry{};  ///< registers at the current syscall's entry
  EntrySnapshot snap;
  /// The syscall that returned ERESTART_RESTARTBLOCK (poll, nanosleep, futex with a timeout):
  /// the kernel resumes it as restart_syscall, whose out-parameters are this call's.
  std::optional<std::pair<Registers, EntrySnapshot>> restart_block;
  /// The file a write-like syscall (one whose spec has an output kind) writes to, by stat(2)
  /// of /proc/TID/fd/FD at its entry (hold_output_write); nullopt for others or where it
  /// could not be read.
  std::optional<struct stat> write_target;
  bool exec_seen = false;  ///< PTRACE_EVENT_EXEC arrived during this syscall
  /// The tid this task had before its execve from a thread other than the main one: the
  /// kernel gave it the process's pid (ptrace(2), "execve(2) under ptrace"); 0 otherwise.
  pid_t exec_former_tid = 0;
  /// That former tid as its tracer knew it (tid_for_tracer then), for PTRACE_GETEVENTMSG.
  pid_t exec_former_seen = 0;
  bool fork_recorded = false;  ///< the fork-like syscall's event was written at its event stop
  bool skip_syscall = false;   ///< entry was cancelled (RecordPolicy::Enosys, the buffer's
                               ///< registration): its exit reports skip_result
  bool blocked = false;        ///< in a syscall that may wait: others of its process may run
  bool entry_marked = false;   ///< a SyscallEntry event was written for the current syscall
  bool interrupt_requested = false;  ///< PTRACE_INTERRUPT sent, its stop not seen yet
  uint64_t interrupt_tick = 0;       ///< when it was sent
  int pending_sig = 0;               ///< held signal-delivery stop, delivered when scheduled
  uint64_t run_start = 0;            ///< tick when it last started running user code
  uint64_t slice = kDefaultSliceTicks;
  /// Chaos mode: its CPU-time counter and the current slice's length on it, in nanoseconds
  /// (0: the slice is measured in ticks, as where the counter could not be opened).
  TaskCpuClock cpu_clock;
  /// Where its cpuids ran (emulate_insn): its /proc/TID/stat, kept open.
  LastCpuReader cpu_reader;
  uint64_t slice_ns = 0;
  pid_t vfork_child = 0;  ///< held until this vfork child execs or exits
  /// Signals the recorder took from the task to send again (RecordSession::put_off_signal),
  /// in the order they arrived: one that arrived inside a repeated string instruction (sent
  /// when a breakpoint after it is reached), one that another stop came before, a timer's
  /// held expiry.
  std::vector<PutOffSignal> put_off;
  /// Address of the breakpoint after the string instruction the task is in, where its
  /// put-off signals are sent; 0 when none is set.
  uint64_t deferred_at = 0;
  /// The code byte an int3 at deferred_at replaced where the CPU's debug registers do not
  /// serve programs (hardware_debug_registers()); -1 when none.
  int deferred_byte = -1;
  SyscallBuffer buffer;  ///< its librewind_preload.so buffer, if registered
  /// A signal that interrupted a buffered call the recorder then aborted: sent again once the
  /// library makes that call as a traced syscall, so that it interrupts that call instead.
  int redeliver_sig = 0;
  SigInfo redeliver_si{};
  int64_t skip_result = -ENOSYS;  ///< skip_syscall: the result the exit reports
  /// Its library announced that it patches libc next (RWD_FEATURE_PATCH_END) and has not yet
  /// made RWD_SYS_PATCHED: that call is the library's, answered 0.
  bool patching_libc = false;
  /// The current syscall is the preload library's own (its registration, RWD_SYS_PATCHED):
  /// a tracer following the task's syscalls sees no stop for it, as natively there is none.
  bool library_call = false;
  /// Preemptions put off in a row because replay could not find the task's point with a
  /// trampoline (RecordSession::preempt); at kMaxPutOffPreemptions it is preempted anyway.
  uint32_t put_off_preemptions = 0;
  /// The tick of the last put-off preemption: the next interrupt waits for a later tick, or
  /// it could stop the task before it ran an instruction, and 50 came in a row.
  uint64_t put_off_tick = 0;
  uint64_t put_off_rip = 0;  ///< where the last preemption was put off
  /// Instructions the signal now being delivered was put off past (kMaxSignalHops).
  uint32_t signal_hops = 0;
  /// The signal now being delivered has had its point search (signal_point.cpp): where
  /// another stop came during it and the signal was put off, it is delivered where it comes
  /// again without a second (a loop with an emulated rdtsc in each pass would put it off at
  /// every pass).
  bool signal_lapped = false;
  /// A timer's expiry held back until timer_free_at (RecordSession::hold_timer_expiry), then
  /// sent again; 0 when none is held.
  int held_sig = 0;
  SigInfo held_si{};
  /// Before this moment a timer's expiry is held: the task runs at least as long as the
  /// recorder took over the last one's delivery (its point's digest, the handler's frame).
  std::chrono::steady_clock::time_point timer_free_at{};
  /// Records taken from the buffer when the task stopped, for its next event.
  std::vector<uint8_t> buffered;
  /// The thread that created it (its real parent, clone(2): a thread's or a CLONE_PARENT
  /// child's is its creator's); 0 for the recording's first task, whose parent is outside.
  pid_t parent_tid = 0;
  /// Its emulated tracer after a PTRACE_TRACEME (ptrace_emulation.cpp): the recorded thread
  /// that traces it, kTracerOutside when that is a process outside the recording; 0 when no
  /// recorded task traces it.
  pid_t tracer = 0;
  /// Its tid as its tracer knows it (pid_seen_by, kept while it is traced: its wait answers
  /// and SIGCHLD name it so after it ended, when /proc no longer tells).
  pid_t tid_for_tracer = 0;
  /// The emulated ptrace stop it sits in for its tracer: the signal its tracer's wait reports
  /// (WSTOPSIG), 0 when it is in none. It is then out of its address space's turns.
  int tracer_stop = 0;
  bool tracer_stop_reported = false;                 ///< a wait of its tracer reported tracer_stop
  TracerStop tracer_stop_kind = TracerStop::Signal;  ///< what tracer_stop is
  bool tracer_syscalls = false;  ///< resumed by PTRACE_SYSCALL: it stops at syscalls too
  /// Resumed by PTRACE_SYSEMU or PTRACE_SYSEMU_SINGLESTEP: its next syscall stops at its entry
  /// and is not run (the tracer emulates it): its result is the rax the tracer leaves, and
  /// no syscall-exit-stop follows (ptrace(2); kernel/entry/common.c, SYSCALL_WORK_SYSCALL_EMU).
  bool tracer_sysemu = false;
  /// Stopped at the entry of a call that its PTRACE_SYSEMU skips (on_syscall_entry skips it).
  bool sysemu_entry = false;
  /// That call was skipped: its exit makes no stop for the tracer.
  bool sysemu_skipped = false;
  bool tracer_step = false;  ///< resumed by PTRACE_SINGLESTEP: it runs one instruction
  /// That instruction, or the one of its last Step stop, is a `syscall`: it runs as a traced
  /// syscall, and the step's stop comes after the call's event (on_syscall_exit).
  bool tracer_step_over_syscall = false;
  /// That step's instruction was one the recorder emulates (rdtsc, cpuid): no real step ran,
  /// so PTRACE_GETSIGINFO's answer is made up as the kernel's would be.
  bool tracer_step_emulated = false;
  /// That step came with a signal that has a handler: it ends at the handler's first
  /// instruction, once the signal's event is written (deliver_and_write).
  bool step_into_handler = false;
  /// Its desched counter's signal came before the buffered call it was enabled for: the
  /// recorder enables it again at the first desched stop with no such signal pending
  /// (RecordSession::note_desched_before_call).
  bool rearm_desched = false;
  /// Stopped by its own seccomp filter (on_program_seccomp_trace): the call's result, unrun
  /// (an errno, ENOSYS, or for SECCOMP_RET_TRAP its number), and the SIGSYS that follows it.
  std::optional<int64_t> program_seccomp_answer;
  std::optional<SigInfo> program_seccomp_sigsys;
  /// Its own filter said SECCOMP_RET_TRACE with this data and its tracer asked for such stops
  /// (PTRACE_O_TRACESECCOMP): the PTRACE_EVENT_SECCOMP stop comes at the call's entry, after a
  /// syscall-enter-stop if there is one (seccomp_stop_for_tracer).
  std::optional<uint16_t> seccomp_stop_due;
  /// Its PTRACE_EVENT_SECCOMP stop came after the recorder took the call (no filter of
  /// rewind's: every call stops at its entry first): resumed, the call goes on in the kernel.
  bool seccomp_stop_inside = false;
  /// A call its own filter sends to a supervisor (SECCOMP_RET_USER_NOTIF): the recorder skips
  /// it where it was made and makes it again from the library's page, where the filter
  /// notifies as the program's did (redirect_user_notif). Skipped: at the exit stop of the
  /// skipped call; InStub: made again, up to its exit stop.
  enum class UserNotif : uint8_t { None, Skipped, InStub };
  UserNotif user_notif = UserNotif::None;
  Registers user_notif_entry{};  ///< the call's registers where the program made it
  /// It installed a filter that notifies a supervisor (SECCOMP_RET_USER_NOTIF), or was cloned
  /// from one that had (filters are inherited): with no filter of rewind's, any call may
  /// wait for that supervisor, so each one gives up its turn.
  bool notif_filtered = false;
  /// The program set no_new_privs itself (prctl(2) PR_SET_NO_NEW_PRIVS), in this task or the
  /// one it was cloned from; rewind sets it for every task (install_syscall_filter).
  bool no_new_privs = false;
  /// Where wrap_program_filter put the program's filter on the stack during the call (0:
  /// nowhere), and the bytes it covered there.
  uint64_t filter_saved_at = 0;
  std::vector<uint8_t> filter_saved;
  /// Its tracer's PTRACE_INTERRUPT came while it ran: it stops for it at its next stop where
  /// replay's copy can stand (tracer_interrupts.cpp); asked of the kernel at tick
  /// tracer_interrupt_tick last.
  bool tracer_interrupt_pending = false;
  uint64_t tracer_interrupt_tick = 0;
  /// Stops of that interrupt put off where no trampoline fits (up to kMaxPutOffPreemptions).
  uint32_t tracer_interrupt_put_offs = 0;
  /// Stopped where its last event left it and not run since, waiting for its turn: resumed
  /// by its tracer from a stop at an event (or a fork-like event stop), preempted at its
  /// Sched event, or back from a syscall at its exit's event (proc_mem_writes.cpp may write
  /// into its memory).
  bool unrun_since_event = false;
  /// The memory its syscall holds still (AddressSpace::held_for_write, hold_space) from the
  /// call's entry to its exit's event: the target of a write into /proc/PID/mem, or memory
  /// of other turns that its mapping shares (hold_for_shared_mapping); null for any other
  /// call.
  std::shared_ptr<AddressSpace> written_space;
  /// True while its mapping call's exit must merge its turns with written_space's
  /// (join_shared_turns).
  bool joins_turns = false;
  /// Its debug registers as its tracer set them (PTRACE_POKEUSER of u_debugreg), also made
  /// on the real task (debug_register_write); DR6 as the last hit left it.
  std::array<uint64_t, 8> tracer_debug_registers = kTracerDebugRegistersReset;
  uint64_t tracer_options = 0;  ///< PTRACE_O_* its tracer set (PTRACE_SETOPTIONS, SEIZE)
  bool tracer_seized = false;   ///< attached by PTRACE_SEIZE: INTERRUPT and LISTEN work
  /// The PTRACE_EVENT_* of the emulated stop (its tracer's wait status, bits 16-23), 0 for
  /// none; and what PTRACE_GETEVENTMSG gives there (the former tid at an exec, the wait
  /// status at an exit).
  int tracer_event = 0;
  uint64_t tracer_event_msg = 0;
  /// Its tracer's PTRACE_LISTEN: out of its stop, it waits for the end of its group-stop
  /// (SIGCONT) or a PTRACE_INTERRUPT, and then stops again (TracerStop::Interrupt).
  bool tracer_listening = false;
  /// A stop its tracer sees next when it resumes it, before it runs: the syscall-exit-stop of
  /// an execve after its PTRACE_EVENT_EXEC stop, or the SIGTRAP after an execve's
  /// syscall-exit-stop (ptrace(2), "execve(2) under ptrace").
  std::optional<TracerStop> next_tracer_stop;
  /// Its PTRACE_EVENT_EXIT stop at its exit or exit_group was reported: the call goes on when
  /// it is scheduled after its tracer resumes it.
  bool exit_reported = false;
  /// Its PTRACE_EVENT_VFORK stop waits for its vfork child's exec or end, as the parent does
  /// (RecordSession::release_vfork_parent): its tracer sees it then.
  bool vfork_event_pending = false;
  /// Resumed by its tracer from a PTRACE_EVENT_FORK, VFORK or CLONE stop: it goes on inside
  /// its syscall, to the syscall's exit.
  bool resume_inside_syscall = false;
  /// A followed tracee's new task (PTRACE_O_TRACEFORK...): its first stop is one for its
  /// tracer, before it runs.
  bool stop_at_start = false;
  /// The stop signal of the group-stop it sits in (signal(7): its process stopped), 0 when
  /// none. Out of its address space's turns until SIGCONT ends it.
  int group_stop = 0;
  /// rewind made a real PTRACE_LISTEN on it in its group-stop: it stays stopped until SIGCONT
  /// or a PTRACE_INTERRUPT ends that with PTRACE_EVENT_STOP (ptrace(2), "Group-stop").
  bool listening = false;
  /// It stopped at its current syscall's entry for its tracer, with a SyscallEntry event,
  /// and the recorder has not gone on with the call yet: it does when the task is scheduled
  /// after its tracer resumes it (the call's own handling writes no second entry event).
  bool entry_reported = false;
  /// The stop came where its last event left it (at the exit of one of its syscalls, before
  /// any instruction ran): replay's copy of it stands there too, so its tracer's writes to it
  /// (tracee_writes.h) can be made again in replay.
  bool tracer_stop_at_event = false;
  /// Its last syscall's exit: it was resumed from there and has not stopped since
  /// (stop_follows_exit: this stop is the first after it), at this rip, with this result.
  bool resumed_from_exit = false;
  bool stop_follows_exit = false;
  /// Resumed with a signal right at its Signal event, with no handler to run (a stop signal):
  /// a group-stop that follows stands where that event left it.
  bool resumed_from_signal_event = false;
  bool stop_follows_signal_event = false;
  uint64_t exit_rip = 0;
  int64_t exit_result = 0;
  /// A signal its tracer's resume passed on: delivered, when it arrives, without a stop.
  int tracer_passed_sig = 0;
  /// pending_sig is a fault of its own instruction (passed on by its tracer).
  bool pending_fault = false;
  /// A tracee its current ptrace call resumes (PTRACE_CONT, PTRACE_SYSCALL, PTRACE_DETACH:
  /// with `sig`) or kills (PTRACE_KILL), once the call's event is written; tid 0 when none.
  struct TraceeResume {
    pid_t tid = 0;
    int sig = 0;
    bool syscalls = false;
    bool kill = false;
    bool step = false;    ///< PTRACE_SINGLESTEP
    bool sysemu = false;  ///< PTRACE_SYSEMU or PTRACE_SYSEMU_SINGLESTEP
  } resume_tracee;
  /// Its wait4 or waitid was interrupted (PTRACE_INTERRUPT) to report a tracee's stop.
  bool wait_interrupted = false;
  /// Its wait4 or waitid waits for emulated tracees only: the kernel runs pause(2) in its
  /// place (orig_rax), which a tracee's stop or end interrupts (tracer_wait_must_block).
  bool wait_in_pause = false;
  /// What a syscall answered without the kernel wrote into its memory (a ptrace read's
  /// result): the syscall's event carries it.
  std::vector<MemoryRegion> answered_memory;
  /// The recorded task its ptrace or process_vm_writev named by another number (from inside a
  /// PID namespace: pid_seen_by); 0 otherwise. The syscall's event carries it (written_tid).
  pid_t named_tid = 0;
  /// The buffer of its getdents64 or getdents of a descriptor directory whose listing may hide
  /// desched counters, as it was at the call's entry (empty otherwise): the bytes the kernel
  /// wrote for hidden entries are put back from it (hidden_fds.cpp).
  std::vector<uint8_t> listing_before;
};

/// RecordTask::tracer of a task whose PTRACE_TRACEME named a parent outside the recording.
constexpr pid_t kTracerOutside = -1;

/// Ticks in a row a preemption may wait for the task to leave code where replay could not
/// find its point with a trampoline (point_trampoline_fits): past them, a task that spins in
/// such code (a JIT's writable code) is preempted there.
constexpr uint32_t kMaxPutOffPreemptions = 50;

/// Instructions in a row an asynchronous signal may be put off past because replay could not
/// find its point with a trampoline (RecordSession::deliver_signal); then it is delivered
/// where the task stands.
constexpr uint32_t kMaxSignalHops = 16;

/// The tasks that take turns running user code: at most one of them runs it at a time, and
/// the order in which they do is recorded, which is what makes threads replayable (DESIGN.md
/// "Recording"). Those of one address space, and of every address space that shares writable
/// memory with it from a fork (a MAP_SHARED mapping or System V segment the child inherited):
/// each one's writes to that memory come between the others' events then, in the order the
/// trace gives replay (rr runs one task at a time in the whole recording).
struct Turns {
  pid_t active = 0;  ///< the task running user code or a prompt syscall, or 0
  /// The task whose write into one of these memories (/proc/PID/mem, from another process: a
  /// debugger inside the recording) needs every task here to stand where its last event left
  /// it: none is scheduled from when it is asked (the running one is preempted) until that
  /// write's event is written (proc_mem_writes.cpp). 0 when none.
  pid_t held_for_write = 0;
  bool write_waits = false;  ///< that write waits at its entry for the running task's stop
  /// That write waits also for a running task in a prompt syscall to give up its turn at the
  /// syscall's exit, not only for its entry (hold_space's past_syscalls).
  bool hold_past_syscalls = false;
  /// True when another task (in `ready`) or a write into this memory waits for the running
  /// task's stop: it is preempted at the end of its slice, or at once for the write.
  bool others_wait() const { return !ready.empty() || held_for_write != 0; }
  std::deque<pid_t> ready;  ///< tasks waiting to run user code
};

/// The tasks that share one address space: a process's threads, and the processes created
/// with CLONE_VM but not CLONE_THREAD (clone(2)) that share it with them. They take turns
/// (Turns), with those of other address spaces that share writable memory with this one. A
/// vfork child has one of its own: its parent waits until it execs or ends. An exec leaves it
/// for a new one, with turns of its own.
struct AddressSpace {
  std::shared_ptr<Turns> turns = std::make_shared<Turns>();
  std::vector<pid_t> tasks;  ///< every task in it, of every process sharing it
  /// The digest exclusions of every syscall buffer in this address space: its tasks' (living
  /// or exited: a thread's buffer outlives it) and those a fork copied from the parent. Replay
  /// writes into all of them, so every point of the process leaves them out.
  std::vector<std::pair<uint64_t, uint64_t>> buffer_exclusions;
  /// Where librewind_preload.so keeps its switch here (rwd_buffer_header::library_switch), 0
  /// when no library announced it.
  uint64_t library_switch = 0;
  /// Where librewind_preload.so keeps its descriptor cache switch here
  /// (rwd_buffer_header::fd_cache_switch), 0 when no library announced it.
  uint64_t fd_cache_switch = 0;
  /// Where librewind_preload.so lists the files whose writes it keeps traced because this
  /// memory maps them shared (rwd_buffer_header::shared_files), 0 when no library announced
  /// it (shared_file_writes.cpp).
  uint64_t shared_files = 0;
  /// Where librewind_preload.so keeps its turns switch here (rwd_buffer_header::turns_switch),
  /// 0 when no library announced it (turns_switch.cpp).
  uint64_t turns_switch = 0;
  /// The value there: RWD_TURNS_ALONE or RWD_TURNS_SHARED (the library's start value), as
  /// rewind last wrote it (only rewind writes it).
  int32_t turns_value = 0;
  /// The cache is off for good here (RWD_FD_CACHE_OFF): another memory shares the descriptor
  /// table, or another table this memory.
  bool fd_cache_off = false;
  /// The vfork parents whose children turned the cache off in this memory: each leaves at its
  /// first event that replay emulates after its child execs or ends, and the last to leave
  /// turns the cache on again (fd_cache.cpp).
  std::vector<pid_t> fd_cache_vfork_parents;
  /// How long the last point named in it took (microseconds: its digest, set_point): time
  /// slices grow with it (SchedulePolicy::slice).
  uint64_t point_cost_us = 0;
};

/// A thread group (process): its threads, and the address space they run in.
struct ThreadGroup {
  std::shared_ptr<AddressSpace> space = std::make_shared<AddressSpace>();
  std::vector<pid_t> members;  ///< its threads
  /// Threads a successful execve of another member ended (execve(2): every other thread is
  /// destroyed), with their wait statuses: their Exit events follow the exec's event.
  std::vector<std::pair<pid_t, int>> exec_casualties;
  /// The time-stamp counter mode the program set and sees (prctl(2) PR_SET_TSC, PR_GET_TSC;
  /// 1 is PR_TSC_ENABLE): the real mode stays rewind's PR_TSC_SIGSEGV, which traps rdtsc.
  int tsc_mode = 1;
  /// Descriptors of its fd table that are desched counters of the preload library (its
  /// threads' and those inherited through fork), which a listing of /proc/PID/fd does not
  /// show (hidden_fds.cpp); emptied at execve (the counters are close-on-exec).
  std::set<int> counter_fds;
  /// The member whose exit_group the recorder let run (its event written, the call resumed),
  /// or to which it delivered a signal whose default action ends the process; 0 when none:
  /// the kernel kills the others at it, as replay does, so their stops from then on are held
  /// without events (group_exit.cpp).
  pid_t exiting = 0;
  /// Wait statuses of the stops held while `exiting`: handled after all if the exit_group
  /// returns (a program's seccomp filter refused it).
  std::vector<std::pair<pid_t, int>> held_stops;
};

}  // namespace rwd
