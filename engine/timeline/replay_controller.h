// The replay controller: the timeline's engine (internal to engine/timeline). It owns the
// thread that runs every replay (ptrace ties tracees to one thread), chooses where a replay
// starts (checkpoints), decides which stops of the replayed program are the debugger's and
// reports them (stop_classification.cpp), runs reverse execution as scans and re-runs
// (reverse_execution.cpp), serves inspection and diversions while paused (inspection.cpp,
// diversion.cpp) and arms the debug registers for watchpoints (watch_registers.h).
// docs/architecture.md draws where it sits.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/replay/replay_session.h"
#include "engine/timeline/breakpoints.h"
#include "engine/timeline/checkpoint_store.h"
#include "engine/timeline/pass_trap.h"
#include "engine/timeline/replay_thread.h"
#include "engine/timeline/timeline.h"
#include "engine/timeline/timeline_run.h"
#include "engine/timeline/watch_registers.h"

namespace rwd {

/// What a reverse operation must do after a scan finished.
enum class After : uint8_t { None, ReverseContinue, ReverseStep };

/// Runs replays of one trace for a Timeline (its facade, timeline.cpp). The op_* operations
/// and the inspection methods run on the replay thread (through call() and operate()).
class ReplayController {
 public:
  static constexpr uint64_t kSingleStepBit = 1ull << 14;  ///< DR6.BS
  static constexpr uint64_t kWatchBits = 0xe;             ///< DR6.B1-B3: the debugger's slots
  static constexpr uint64_t kTrapFlag = 0x100;            ///< rflags.TF

  /// Opens the trace at `dir`, starts the replay thread and waits until the replay stands at
  /// the program's first instruction. Throws Error when that fails.
  explicit ReplayController(std::string dir);
  /// Stops the replay thread; the replay and its checkpoints are killed.
  ~ReplayController();

  /// Runs `fn` on the replay thread while it is paused; returns when done (ReplayThread).
  void call(std::function<void()> fn) { thread_.call(std::move(fn)); }
  /// Runs `fn` on the caller's thread while the replay thread stays paused (ReplayThread):
  /// for the inspection methods that make no ptrace request.
  void while_paused(const std::function<void()>& fn) { thread_.while_paused(fn); }
  /// ReplayThread::kept_registers: task `rec_tid`'s registers kept at this stop, if any.
  std::optional<Registers> kept_registers(pid_t rec_tid) { return thread_.kept_registers(rec_tid); }
  /// Starts operation `op` on the replay thread and waits for the stop it ends at.
  StopInfo operate(std::function<Next()> op) { return thread_.operate(std::move(op)); }
  /// The stop the replay stands at.
  StopInfo current() { return thread_.current(); }
  /// here_ as a TimelinePosition (Timeline::position), its digest taken for a Trap.
  TimelinePosition position_here() const;
  /// Whether here_ is position `p` (Timeline::at_position).
  bool at_position(const TimelinePosition& p);

  // --- Operations (run on the replay thread, inside pause()). Each sets the run and returns
  // Resume (on forwards in this replay) or Replay (a new replay for that run). ---

  Next op_forward();
  Next op_step(pid_t tid);
  Next op_seek(uint64_t event);
  Next op_reverse_continue(Timeline::WatchStop at);
  Next op_reverse_step(pid_t tid, uint64_t skip_lo = 0, uint64_t skip_hi = 0);

  // --- Answers to the replay's questions (ReplaySession::run, ReplayStep). ---

  /// ReplayStep::Resume: `t` is about to run its own code with `request`; sets in `cmd` the
  /// request to use instead (PTRACE_SYSEMU_SINGLESTEP to run one instruction), after putting
  /// breakpoints and watch registers in place and stepping off a breakpoint it stands on
  /// (where an event left the task on a breakpoint, that hit pauses first).
  Next before_resume(ReplayTask& t, int request, RunCommand& cmd);
  /// ReplayStep::PatchRequest: whether the replay may put a trampoline over `len` bytes at
  /// `addr` (the moved instructions would hide single steps, watchpoint addresses and
  /// breakpoints in those bytes).
  bool begin_code_patch(const ReplayTask& t, uint64_t addr, size_t len);

  /// True when the instruction at `rip` of `t` is `int1` (icebp, 0xf1), whose trap has no
  /// cause in DR6 either.
  static bool icebp_at(const ReplayTask& t, uint64_t rip);

  /// Whether `t`'s next resume is a single step: a stepi of it, a counted step of a reverse
  /// step, or a step through a rep-prefixed string instruction.
  bool single_stepping(const ReplayTask& t) const;

  /// Whether the steps of `t` count now, for a reverse step's scan or its run to the
  /// instruction before (StepCount::pos).
  bool counting_steps(const ReplayTask& t) const;
  /// Counts a step of the reverse step's task that left it at `rip` (Run::steps), and notes
  /// it as Run::landing when `rip` is outside the skipped range (nullopt: never a landing).
  void count_step(std::optional<uint64_t> rip);

  /// True once after interrupt() was called during a user-visible forward run. A backward
  /// operation ends in a second replay whose stop must be exact: a reverse continue is cut
  /// short only between its scans (interrupt_reverse_continue), other ones not at all.
  bool take_interrupt();
  Next pause_interrupted(const Point& here);
  /// Before a user's pause where the task runs its own code: single-steps it, at most
  /// kSettleSteps instructions (jumps followed; stopping before a syscall, an emulated or
  /// string instruction, a breakpoint), to the first instruction that a trampoline's
  /// 5-byte jump covers alone (5 bytes or longer), when one is that near. A
  /// point at a shorter instruction shares the patch with the next one, and a branch to that
  /// one (a loop's test) traps at every pass (PassTrap::Trap::Entered): scans back to such a
  /// point cost a trap per pass (docs/performance.md, long traces). Not with watchpoints or
  /// breakpoints in the way, nor when the next event is a signal (the replay may be reaching
  /// its point with a debug register).
  void settle_for_trap(ReplayTask& t);
  static constexpr size_t kSettleSteps = 8;
  /// ReplayStep::Stopped: sets `cmd.claimed` when `s` was the debugger's own stop (a
  /// breakpoint, watchpoint or finished step, now handled), leaves it false when it is the
  /// replay's.
  Next after_stop(ReplayTask& t, const Stop& s, RunCommand& cmd);

 private:
  // --- The replay thread. ---

  /// The replay thread's body: replays (replay()) until shut down or failed.
  void main();
  /// One replay for run_, from the checkpoint start_for() picks: drives the session
  /// (ReplaySession::run) and answers its steps; returns Replay (run_ holds the next run)
  /// or Shutdown.
  Next replay();
  /// A replay restored from interval checkpoint `from` stands at its point already: when
  /// run_ is a Goto to that point (an interrupted reverse continue's), or Steps counted from
  /// it with none to make (a reverse step's, pass_fall_back), pauses there.
  Next at_start_point(const CheckpointStore::Saved& from);
  /// After event `e` was replayed: breakpoint and watch-register bookkeeping for execs,
  /// mappings and forks, a checkpoint when due, then on_between().
  Next event_done(const Event& e);

  /// Keeps entry_pending_ and last_entry_event_ up to date after event `e`.
  void note_entries(const Event& e);

  /// The entry point of the syscall that last_event_ (a Syscall of `tid`, event `n`)
  /// completed: at the SyscallEntry event that brought the task there, if any.
  Point entry_of_last_syscall(pid_t tid, uint64_t n) const;

  // --- Checkpoints (policy: checkpoint_store.h). ---

  using Saved = CheckpointStore::Saved;

  /// Takes a checkpoint after the current event when one is due, or when asked (`requested`:
  /// kept until the timeline ends). Returns whether one exists here.
  bool maybe_checkpoint(bool requested = false);
  /// Copies the replay just after the current event into the checkpoint store (`pinned`:
  /// kept until the timeline ends); its copying is not replay time (Saved::cost_ms). False
  /// when no copy can be made here (a fork in progress, shared memory...).
  bool add_event_checkpoint(bool pinned);
  /// In a reverse continue's scan, notes that it is at checkpoint `event` (or interval
  /// checkpoint `inner`) with the hits counted so far (Run::hits_at).
  void note_hits_at(uint64_t event, uint64_t inner);
  /// Points `run`, which counts hits, at the latest checkpoint reverse-continue scan `scan`
  /// went through before its last hit that is still held, with the scan's window; returns
  /// the hits the scan had counted there (nullopt, `run` unchanged: no such checkpoint).
  std::optional<uint64_t> start_after_hits(Run& run, const Run& scan) const;
  /// Copies the replay where it stands, breakpoint patches taken out first: just after an
  /// event (ReplaySession::checkpoint) or, with `between`, inside the event in progress
  /// (checkpoint_between). The Saved's event, copy and entry bookkeeping are set; nullopt
  /// when no copy can be made.
  std::optional<Saved> copy_here(bool between);
  /// Interrupted where it ran (Stop::Interrupted) after IntervalCheckpoints::every() of replay
  /// in its interval: takes a checkpoint of the replay here, inside the interval, when
  /// nothing of the timeline's is in the code (a replay from there puts in place only the
  /// buffered records `t` has not used yet: ReplaySession::checkpoint_between).
  /// With `now`, at once and whatever the run wants counted (a counting trampoline just
  /// removed). Returns its id (0: none taken).
  uint64_t take_inner_checkpoint(const ReplayTask& t, bool now = false);
  /// Whether `t` (registers `r`) stands inside a buffered call: in its library's section
  /// rwd_defer (ReplayTask::defer_start), on the untraced page, or at a syscall the library
  /// makes with the buffer's header at hand, where a copy could hold a call half made (a
  /// record read and not yet marked used): no checkpoint is taken there.
  bool in_buffered_call(const ReplayTask& t, const Registers& r) const;
  /// take_inner_checkpoint(t) when one is due (inner_checkpoint_due): at a stop of `t` in
  /// user code, the interrupt's or one of its own.
  void inner_checkpoint_if_due(const ReplayTask& t) {
    if (std::chrono::steady_clock::now() >= inner_checkpoint_due(t)) take_inner_checkpoint(t);
  }
  /// When the running task `t` is to be interrupted for a checkpoint inside its interval (as
  /// RunCommand::interrupt), or never (not while a counting trampoline is wanted, a
  /// breakpoint is lifted or a diversion is out).
  std::chrono::steady_clock::time_point inner_checkpoint_due(const ReplayTask& t) const;

 public:
  /// A checkpoint at the current point on request: only just after an event.
  bool request_checkpoint();

 private:
  /// The checkpoint a new replay for `run` starts from (nullptr: the trace's start).
  const Saved* start_for(const Run& run) const;

  /// The replayed tasks that have not ended (a main thread that ended before its other
  /// threads is listed as Exited until its status comes, and is not counted).
  size_t live_tasks() const;

  /// The task replaying `rec_tid` now, or nullptr.
  const ReplayTask* live(pid_t rec_tid) const;
  /// The live task whose real tid in this replay is `tid`, or nullptr.
  const ReplayTask* live_by_tid(pid_t tid) const;
  /// Whether task `rec_tid` made event `e`: under its own tid, or, for an Exec event, under
  /// the tid it had before that exec gave it the process's (ReplayTask::exec_former_rec).
  bool made_by(const Event& e, pid_t rec_tid) const;
  Next on_between();
  Next on_entry(ReplayTask& t);
  Next on_signal(ReplayTask& t, int sig);

  /// A trap the debugger caused: a breakpoint (rip at it), a watchpoint or a single step.
  Next on_trap(ReplayTask& t, const Registers& r, bool breakpoint, uint64_t dr6);

  /// `t` paused where its next step makes it use `pos` bytes of its buffered syscall records
  /// (the replay asked for it: Run::pos). From here its steps count. No point lies between
  /// the records used before and here, so no scan target is here.
  /// (after_stop has put a lifted breakpoint back already.)
  void on_buffer_pause(const ReplayTask& t, uint32_t pos);

  /// Counts hit `si` of a run that goes to hit number `n`; true when it is hit `n` (the ones
  /// before are remembered in Run::last_hit_info).
  bool reaches_hit(StopInfo& si, uint64_t n);
  /// A reverse continue's watchpoint hit number `hit` (reporting `si`) at registers `r` of
  /// `t`, just after the write: goes one instruction back by counting single steps (from the
  /// task's previous write in this run between events, else from its last event).
  Next step_back_from_hit(const ReplayTask& t, const Registers& r, const StopInfo& si,
                          uint64_t hit);
  /// Task `t` at registers `r` arrived at the syscall instruction whose entry a reverse step
  /// started from (Scan::count_arrivals), which shows the same state: steps back once more
  /// from there, reporting `report`.
  Next step_back_from_arrival(const ReplayTask& t, const Registers& r, const StopInfo& report);
  /// The address of the instruction of `t` that made watchpoint hit `si`, now at `r` just
  /// after it (arch/write_insn.h), or nullopt when it cannot be told for sure.
  std::optional<uint64_t> writing_insn(const ReplayTask& t, const Registers& r, const StopInfo& si);

  /// A target point can lie inside a repeated string instruction (`rep stos` stopped by a
  /// watchpoint or a step after some iterations): a breakpoint on its rip fires only before
  /// the first iteration. At the target's rip with other registers, single-step that task
  /// iteration by iteration until the target is reached or the instruction is done.
  void follow_rep_target(const ReplayTask& t, const Registers& r);
  /// The replay reached the trace's end: forward operations stay there.
  Next on_end();
  /// Pauses at the trace's end (`here`, reporting `si`) for as long as each operation is a
  /// forward one: nothing lies beyond. Returns the first other operation's Next.
  Next pause_at_end(const StopInfo& si, const Point& here);

  /// Whether event `e` may have replaced mapped pages (and so patched breakpoints).
  static bool changes_mappings(const Event& e);

  /// Whether the process-creating syscall `e` (by task `tid`, stopped just after it) gave
  /// the child the parent's memory rather than a copy (vfork, CLONE_VM).
  static bool shares_memory(const Event& e, pid_t tid);

  /// Whether event `e` mapped executable code (see Timeline::set_stop_at_code_mappings).
  static bool maps_code(const Event& e);
  /// The recorded pid of the process event `e` made (fork, vfork, clone without
  /// CLONE_THREAD) when that process is live, else 0.
  pid_t forked_process(const Event& e) const;
  /// The recorded tid that the task which made exec event `e` has now (an exec by a thread
  /// other than the main one takes the process's id, execve(2)); 0 when none is live.
  pid_t exec_caller(const Event& e) const;
  /// The recorded pid of the process that exit event `e` ended (no task of it is left after
  /// it) while other tasks live on, else 0 (the end of the trace is not a process's exit).
  pid_t ended_process(const Event& e) const;
  /// Notes the recorded pid of every task of the replay (rec_pid_of_): an exit event finds
  /// its task gone from the session.
  void note_processes();

  /// Whether event `e` moved its task as one step does: a syscall or an emulated rdtsc
  /// (an instruction), or a signal's delivery (to its handler's first instruction, where a
  /// step stops as in gdb; a fatal one ends the trace first, on_signal).
  static bool consumes_instruction(const Event& e);
  Point trap_point(const ReplayTask& t, const Registers& r);

  /// The memory digest naming a point of task `t` (Point::digest): its process's memory
  /// without the dead part of its live tasks' stacks and its syscall buffers' records, as
  /// recorded points leave them out.
  MemoryDigest point_digest(const ReplayTask& t) const;
  /// The live memory of `t`'s process now (point_digest hashes it), with the parts left out.
  LiveMemory live_memory_of(const ReplayTask& t) const;
  /// Sets `p`'s digest and stack window digest for `t` standing at p.regs.
  void set_point_digests(Point& p, const ReplayTask& t) const;
  /// True if `at` (digest not yet taken) is `target`.
  bool reached(const Point& target, const Point& at);
  /// True if a run that has replayed `done` events can no longer reach Trap point `target`:
  /// its interval is over (false for the other kinds).
  static bool missed(const Point& target, uint64_t done);

  /// The code site of `addr` in process `pid` now (its address when the maps are gone).
  static CodeSite site_in(pid_t pid, uint64_t addr);

  /// Bytes of buffered syscall records task `rec_tid` has used since its last event (0: none,
  /// or its library cannot pause there: ReplaySession::can_pause_buffer).
  uint32_t buffer_pos(pid_t rec_tid) const;

  /// Sets a scan from the trace's start to the current point, then continues `after`
  /// (returns Replay). With count_steps, `after_hit` (not 0) makes the steps count once the
  /// current run's hit number `after_hit` is passed (Run::after_hit), replaying from the same
  /// checkpoint.
  Next start_scan(After after, bool count_steps, uint64_t after_hit = 0);
  /// The first event of a scan window (Run::count_from) reaching `window` events back from
  /// `target`'s (its own interval is window 1); 0 once that passes the trace's start.
  static uint64_t window_start(const Point& target, uint64_t window);

  /// interrupt() during a reverse continue, in a scan that looks further back than the last
  /// one: that scan found no hit after event `below` (where it started), so the run stops
  /// there, as if it had run backwards that far. (During the first scan, the interrupt waits
  /// for it to end: before that, no point before the current one is known to be hit-free.)
  Next interrupt_reverse_continue();

  /// The scan reached the current point: choose where to go, and go (returns Replay).
  Next scan_done();
  /// How a reverse continue's scan finds its target (a point between events of task `t`,
  /// live in the current replay): a counting trampoline comparing registers where one may
  /// go (Scan::find_by_trap, comparing `stack_words`: the target's, stack_words_at), else a
  /// breakpoint at its instruction (internal_bp_).
  void aim_scan(runs::Scan& scan, const ReplayTask& t, std::vector<uint64_t> stack_words);
  /// Makes `site` the scan's internal breakpoint (internal_bp_) and sets it; none: nothing.
  void arm_internal(std::optional<CodeSite> site);
  /// Before a resume: the scan's internal breakpoint is patched only once the replay is in
  /// its target's interval (the target cannot be met before: at_target). In the events
  /// before, a target's instruction that runs often (an interpreter's dispatch) would trap
  /// at each pass, each trap a ptrace round trip and a step over it.
  void place_internal();
  /// A reverse continue's scan from checkpoint Run::inner (inside the target's interval)
  /// found no hit: the next one ends at that checkpoint's point, from the one known to lie
  /// before it (or the event's); where that checkpoint is gone, the whole interval from its
  /// event's checkpoint (returns Replay).
  /// `internal`: the scan's internal breakpoint, if it had one.
  Next scan_back_inside(const Run& done, std::optional<CodeSite> internal);
  /// A trap of a window end's trampoline that was not the point: past kWindowEndMisses of
  /// them in one scan, it counts to the reverse continue's own point instead (no hit lies
  /// after the window's end), from the same checkpoint (returns Replay then).
  std::optional<Next> window_end_miss();
  /// Sets Run::watch_at_ms of the reverse continue's scan run_ (just made, not yet started),
  /// whose window ends at replay time `to_ms` (CheckpointStore::cost_here's ms): the window
  /// from the checkpoint it starts from less `lead`, when the scan counts the debugger's
  /// watchpoints in the CPU's debug registers, finds its target by a breakpoint (not a
  /// trampoline, which a checkpoint cannot be taken beside) and the window is at least
  /// kLateWatchMinWindow longer than the lead; else zero (armed from the start, as before).
  void set_late_watch(double to_ms, std::chrono::microseconds lead);
  /// At an interrupt's stop of task `t` (user code inside an interval): when the run arms
  /// the debugger's watchpoints late (Run::watch_at_ms) and that time has come, takes a
  /// checkpoint here, from which the run counts its hits, and returns true: before_resume
  /// arms them from now on. False when not due, or no checkpoint can be taken at this stop
  /// (tried again at the next interrupt, kLateWatchFirstLookUs later).
  bool late_watch_ready(const ReplayTask& t);
  /// The late watchpoints go in from the checkpoint just taken at `event` (inside its
  /// interval: `inner`, its IntervalCheckpoints id; 0: just after the event): the run
  /// starts its count of hits there, and the checkpoint is the first of its Run::hits_at.
  void arm_late_watch_from(uint64_t event, uint64_t inner);
  /// Whether run_ arms its watchpoints late and has not yet.
  bool late_watch_pending() const { return run_.watch_at_ms > 0 && !run_.watch_armed; }
  /// Whether late_watch_pending() and its replay time has come.
  bool late_watch_due() const {
    return late_watch_pending() && checkpoints_.cost_here() >= run_.watch_at_ms;
  }
  /// Just after an event, while the late watchpoints wait: notes its replay time
  /// (Run::watch_events), and anchors their time to this replay's when it is the run's
  /// Run::watch_anchor_event. Once anchored and due, they go in at this event's checkpoint
  /// (taken if there is none) unless the event ends the window; never at an event while
  /// their time is only estimated (a replay that reached an event late armed them there
  /// before a loop).
  void late_watch_at_event();
  /// A late-armed scan (Run::watch_at_ms) whose count cannot be used: it never armed, no hit
  /// came after it armed, or its hits' checkpoints are gone. The same scan again (returns
  /// Replay), late again: before the checkpoint it counted from, or before the end of the
  /// window's last long interval as this replay measured it (long_interval_end), with the
  /// same lead after a first estimated try and twice the lead after others; armed from the
  /// start when there is no long interval, after kLateWatchTries, or once the lead covers
  /// the window.
  Next rescan_armed(const Run& done, std::optional<CodeSite> internal, const char* why);
  /// Run::watch_lead of a reverse continue's first late-armed window: a Python loop's line
  /// runs about 25 times a microsecond here, and each hit counted is a trap (about 40 us).
  static constexpr std::chrono::microseconds kLateWatchLead{250};
  /// The lead of each try after one that armed too late (rescan_armed): each try counts
  /// less than twice the hits it had to (the last hit lies past its lead).
  static constexpr int kLateWatchGrowth = 2;
  /// Tries of one reverse continue (rescan_armed) after which its windows arm their
  /// watchpoints from the start: each try replays its window up to its arm time, which costs
  /// more than the hits it saves when they are few (R's exit: hundreds of events without a
  /// hit after the last one).
  static constexpr int kLateWatchTries = 8;
  /// The replay time at which the last interval of at least kLongInterval ended in the
  /// window `done` replayed (the window's own end when its last interval is one), from its
  /// Run::watch_events; none among those. Hits dense enough to be worth a late arming come
  /// in a loop without syscalls; a stretch of short intervals (R's exit) has none to aim at.
  std::optional<double> long_interval_end(const Run& done) const;
  static constexpr std::chrono::milliseconds kLongInterval{1};
  int late_tries_ = 0;  ///< rescan_armed's tries since the reverse continue began
  /// The interrupt for late watchpoints comes this soon at the earliest (microseconds;
  /// InterruptWhen::first_min_us): a loop's last millisecond before an event is where they
  /// are wanted.
  static constexpr long kLateWatchFirstLookUs = 100;
  /// A window must be this much longer than its lead to arm late: a try costs a checkpoint
  /// and the window's replay before it arms, a millisecond of dense hits 25,000 traps.
  static constexpr std::chrono::milliseconds kLateWatchMinWindow{1};
  static constexpr uint64_t kWindowEndMisses = 512;
  /// Run::arm_after's share of a window's replay time between its checkpoints.
  static constexpr double kArmShare = 0.75;
  /// kArmShare of the replay time from `from_ms` to `to_ms` (CheckpointStore::cost_here's
  /// milliseconds), or zero when `to_ms` is not later or the share is under kLateArmMin.
  static std::chrono::milliseconds arm_share(double from_ms, double to_ms);
  /// Run::arm_after for a scan from interval checkpoint `from` (nullptr: none) to a target
  /// reached by replay `replay` at replay time `cost_ms` (CheckpointStore::cost_here): a
  /// kArmShare of the time between them when that replay took `from`, else (or when shorter
  /// than kLateArmMin) zero.
  std::chrono::milliseconds late_arm(const Saved* from, uint64_t replay, double cost_ms) const;
  /// Run::arm_after for a scan from checkpoint `from`, taken just after an event (nullptr:
  /// none), to a target at replay time `cost_ms`: kArmShare of the estimated time between
  /// them (their cost_ms, which any replay estimates), or zero as late_arm.
  std::chrono::milliseconds late_arm_from_event(const Saved* from, double cost_ms) const;
  /// Whether the run's counting trampoline keeps checkpoints inside the interval from being
  /// taken: any wanted one, except a reverse continue's (find_by_trap) before it goes in late
  /// (Run::arm_after), which counts nothing from where the replay started.
  bool pass_blocks_checkpoints() const;
  /// A shorter Run::arm_after is not worth the interrupt and the checkpoint.
  static constexpr std::chrono::milliseconds kLateArmMin{5};
  /// How much slower than its replay the rest of a window may run with the trampoline in
  /// (about 4.5 times in a tight loop) before trap_give_up_.
  static constexpr double kArmedSlowdown = 8;
  /// A target passed before its late trampoline went in, or not met in time after: the
  /// same scan again, from the same checkpoint, with the trampoline from the start
  /// (Run::arm_after).
  Next rearm_late_trap(const char* why);
  /// The current point as a reverse continue's run reached it: hit number `hit` of a run from
  /// `from`'s checkpoint, which passed or took the checkpoints in from.hits_at (a breakpoint's
  /// hit, or a watchpoint's after the write: not one it went an instruction back from). Set
  /// where that run pauses; reset by any other operation and by any change of breakpoints,
  /// watchpoints or what stops a run (Timeline).
  struct HitOrigin {
    Run from;                  ///< start_event, inner, count_from and hits_at of that run
    uint64_t hit = 0;          ///< hits counted from there, this one included
    bool after_write = false;  ///< that reverse continue stopped after writes
  };
  std::optional<HitOrigin> hit_origin_;
  /// A reverse continue from hit_origin_'s point (with the same breakpoints and watchpoints,
  /// stopping after writes or not as that one did): the hit before is the run's hit number
  /// `hit - 1`, with no scan to find it; it starts from the latest checkpoint that run left
  /// before that hit. nullopt when there is no such origin (or the point is its run's first
  /// hit).
  std::optional<Next> reverse_continue_from_hit(Timeline::WatchStop at);

 public:
  /// Forgets hit_origin_ (Timeline, when breakpoints, watchpoints or what stops a run change).
  void forget_hit_origin() { hit_origin_.reset(); }

 private:
  /// The reverse continue's first scan (to its own point) and its internal breakpoint.
  std::optional<runs::Scan> origin_scan_;
  std::optional<CodeSite> origin_site_;

  // --- Reverse steps by counted passes (pass_steps.cpp). ---
  /// The address of librewind_preload.so's jump to its privileged traced stub (preload/entry.S
  /// rwd_library_jump), whose passes a counting trampoline can count: what ran just before a
  /// point at RWD_PRIVILEGED_TRACED_INSN. 0 when it is not found or cannot be patched.
  uint64_t library_jump_site(const ReplayTask& t, const std::vector<ProcMapping>& maps);

  /// The counting trampoline the current run wants: in task `tid`'s interval after event
  /// `event`, at `x`, with `checks` (the registers of `want`, or a pass number).
  struct PassWant {
    pid_t tid = 0;
    uint64_t event = 0;
    uint64_t x = 0;
    uint64_t reach = PassTrap::kPatchReach;  ///< bytes from x its patch may cover
    PassChecks checks;
    Registers want{};
  };
  std::optional<PassWant> pass_want() const;
  /// A reverse step from a point between events of task step_tid_ (here_): counts the task's
  /// passes at the point's instruction up to the point (Scan::count_passes), then single-steps
  /// from the pass before (StepCount::after_pass). Returns nullopt where that cannot be used
  /// (another task's point, a rep-prefixed string instruction there, REWIND_REVERSE_STEP=steps):
  /// the steps then count from the task's last event.
  std::optional<Next> start_pass_scan();
  /// The first replay of a reverse step by counted passes from here_ (Scan::count_passes),
  /// with pass_fallback_ and pass_first_ set for it; nullopt where that method cannot be used
  /// (see start_pass_scan; also after buffered syscalls in the interval).
  std::optional<runs::Scan> pass_count_scan();
  /// True when REWIND_REVERSE_STEP=steps forces reverse steps to count single steps from the
  /// task's last event (docs/how-it-works.md).
  static bool reverse_steps_forced();
  /// A reverse step from the syscall entry where task step_tid_ stands (here_, an Entry
  /// point): one instruction back is the task's last arrival at its syscall instruction
  /// before the entry (Scan::count_arrivals). The scan start_scan just made, counting steps
  /// from the last event, is kept as the fallback (no arrival seen: the task started the
  /// interval on the instruction). Leaves run_ as it is where the instruction before the
  /// entry is not a 2-byte syscall instruction or REWIND_REVERSE_STEP=steps.
  void count_arrivals_instead();
  /// Whether a counting trampoline comparing registers may find `target`, a point of task
  /// `t` between events: not near a syscall site the preload library patched, not at a
  /// rep-prefixed string instruction and, with `no_breakpoints`, no debugger breakpoint in
  /// any process in the bytes its patch may cover (they would be kept out for the whole run).
  bool trap_may_find(const ReplayTask& t, const Point& target, bool no_breakpoints);
  /// The words of task `t`'s stack from `rsp` up (at most 16, those mapped), for a
  /// trampoline to tell apart the passes whose registers are the same.
  static std::vector<uint64_t> stack_words_at(const ReplayTask& t, uint64_t rsp);
  /// `id` or the first one before it (IntervalCheckpoints::Saved::prev) whose task's
  /// registers are not `point`'s (it could be the point itself, which a count from it never
  /// reaches), or 0.
  uint64_t usable_inner(uint64_t id, const Registers& point) const;
  /// The scan counting passes reached the point: Run::passes of them.
  Next pass_scan_done(const Run& done);
  /// Where the point `point` of task `t` (its first pass at a function's first instruction)
  /// was called from: the direct call (e8 rel32) before the return address at rsp, when it
  /// aims at the point and a counting trampoline can be planned over it (in `maps`); else 0.
  uint64_t direct_call_site(const ReplayTask& t, const Registers& point,
                            const std::vector<ProcMapping>& maps);
  /// Installs the run's counting trampoline in `t` when it is due (before `t` resumes);
  /// falls back to counting steps from the event (returns Replay) when it cannot be installed.
  Next install_pass_trap(ReplayTask& t);
  /// Gives up counting passes for this reverse step (`why`, for REWIND_DEBUG_TIMELINE): its
  /// steps count from the task's last event instead (returns Replay).
  Next pass_fall_back(const char* why);
  /// An int3 trap of `t` (registers `r`) that may be the counting trampoline's; nullopt if not.
  std::optional<Next> on_pass_trap(ReplayTask& t, Registers r);
  /// Patches task `t`'s process to match the breakpoints wanted, except where they must stay
  /// out: a counting trampoline's bytes, and libc's text while the syscall buffer library
  /// scans and patches it (preload/README.md, "Patching"). When that is over, forgets the
  /// patches it wrote over (its stubs) and puts them in again.
  void sync_breakpoints(const ReplayTask& t);

  /// Stops here: tells the waiting caller, then serves calls until an operation resumes;
  /// returns that operation's Next (or Shutdown).
  Next pause(StopInfo si, const Point& here);

 public:
  // --- Inspection (paused: on the replay thread, or through while_paused for memory(),
  // task_list(), auxv(), program_file() and inspect_tid(), which make no ptrace request). ---

  const ReplayTask& task(pid_t rec_tid) const;

  /// The real tid to inspect for `rec_tid`: the diversion's copy while there is one.
  pid_t inspect_tid(pid_t rec_tid);

  /// A forward resume while a diversion exists. If its registers were changed (gdb calling a
  /// function in the program), the copy runs, freely and for real, to its next trap or
  /// signal, and that is the stop (returns true). Otherwise the copy is thrown away and the
  /// replay resumes (returns false).
  bool divert_resume(bool step);
  void end_diversion();
  void begin_diversion(pid_t rec_tid);
  void write(pid_t rec_tid, uint64_t addr, const std::vector<uint8_t>& bytes);

  /// True when task `rec_tid` stands at a syscall's entry: the current point's, or one it
  /// waits in while others run (a SyscallEntry event brought it there).
  bool at_syscall_entry(pid_t rec_tid);
  void set_regs_diverted(pid_t rec_tid, const Registers& regs);
  Registers registers(pid_t rec_tid);
  std::vector<uint8_t> memory(pid_t rec_tid, uint64_t addr, size_t len);
  std::vector<TaskInfo> task_list() const;
  CheckpointStats checkpoint_stats() const;
  std::vector<uint8_t> auxv(pid_t rec_tid);
  std::string program_file(pid_t rec_tid);
  BreakpointTable bps_;
  WatchRegisters watches_;
  std::unique_ptr<ReplaySession> session_;
  ReplayOptions opts_;
  std::optional<pid_t> rep_step_tid_;  ///< single-stepping through a rep instruction
  bool paused_at_pos_ = false;         ///< this replay's task paused at Run::pos
  std::mutex listener_mu_;
  std::function<void(OutputStream, const std::string&)> output_listener_;
  uint64_t output_shown_ = 0;  ///< the last write event whose output was passed on

 private:
  ReplayThread thread_;
  Run run_;
  Point here_;
  Event last_event_;
  const Event* replaying_ = nullptr;  ///< the event the session is replaying now
  /// Tasks whose syscall in progress began at a SyscallEntry event (another task ran beside
  /// it): that event's number. Its entry point is there, not just before the Syscall event.
  std::map<pid_t, uint64_t> entry_pending_;
  std::map<pid_t, pid_t> rec_pid_of_;  ///< recorded tid -> recorded pid (note_processes)
  /// When last_event_ is a Syscall or an Exec whose entry came at a SyscallEntry event: that
  /// event's number; else 0.
  uint64_t last_entry_event_ = 0;
  After after_ = After::None;
  /// Where the reverse continue in progress stops for a watchpoint hit.
  Timeline::WatchStop reverse_watch_stop_ = Timeline::WatchStop::BeforeWrite;
  pid_t step_tid_ = 0;
  /// The code range a reverse step goes back past (Timeline::step_backward); hi 0: none.
  uint64_t skip_lo_ = 0, skip_hi_ = 0;
  /// The timeline's own breakpoint for a scan (at its target's rip), if any.
  std::optional<CodeSite> internal_bp_;
  bool internal_placed_ = false;  ///< internal_bp_ is patched in (place_internal)
  /// The timeline's own breakpoint on a watched write's instruction (runs::PassCount,
  /// runs::PassNumber), until the stop there.
  std::optional<CodeSite> pass_bp_;
  /// The task and rip of the last interrupt (Stop::Interrupted) the run went on from.
  std::optional<std::pair<pid_t, uint64_t>> interrupted_at_;
  /// The task and address of the breakpoint the last resume stepped over, if it did.
  std::optional<std::pair<pid_t, uint64_t>> stepped_off_;
  std::optional<StopInfo> final_report_;  ///< a reverse step's stop reports this instead
  std::optional<uint64_t> step_from_;     ///< a reverse step counts steps from this event
  PassTrap pass_trap_;                    ///< the run's counting trampoline, when installed
  /// The scan a reverse step by counted passes falls back to (steps from the last event, or
  /// from checkpoint `steps_inner_` inside its interval).
  std::optional<runs::Scan> pass_fallback_;
  /// The checkpoint inside the point's interval, known to lie before it, that the steps of
  /// pass_fallback_ count from (0: the event's). A reverse step from a point far into a long
  /// stretch without events single-steps from there, not from the event.
  uint64_t steps_inner_ = 0;
  bool at_event_start_ = false;           ///< trap_point() names "just after the last event"
  std::map<pid_t, uint64_t> resumed_in_;  ///< task -> 1 + events done at its last resume
  /// Where the last stop was reported (resuming from a breakpoint there steps over it).
  uint64_t last_pause_event_ = 0, last_pause_rip_ = 0;
  pid_t last_pause_tid_ = 0;
  CheckpointStore checkpoints_;
  IntervalCheckpoints inner_;  ///< checkpoints inside event intervals
  uint64_t replays_ = 0;       ///< replays started so far (IntervalCheckpoints::Saved::replay)
  uint64_t inner_starts_ = 0;  ///< of which from a checkpoint inside an interval
  uint64_t late_watches_ = 0;  ///< scans whose watchpoints went in late (CheckpointStats)
  uint64_t start_inner_ = 0;   ///< the one this replay started from (0: none)
  uint64_t here_inner_ = 0;    ///< one known to lie before here_ in its interval (0: none)
  /// When the running task's interval began to be replayed, or the last such checkpoint.
  std::chrono::steady_clock::time_point interval_since_{};
  /// No counting trampoline before this time (Run::arm_after, from the replay's start).
  std::chrono::steady_clock::time_point trap_not_before_{};
  /// A trampoline that went in late (Run::arm_after) and has not met the window's end by
  /// this time is taken as passed unarmed (rearm_late_trap()); max: none.
  std::chrono::steady_clock::time_point trap_give_up_{};
  /// The replay time from the trace's start to here_ (CheckpointStore::cost_here) and the
  /// replay that reached it: how far here_ lies from a checkpoint that replay took.
  double here_cost_ = 0;
  uint64_t here_replay_ = 0;
  /// The reverse step by counted passes in progress: its first scan, and the checkpoint
  /// inside the interval it counts from (0: the event's). A failure retries from an earlier one.
  std::optional<runs::Scan> pass_first_;
  std::optional<uint64_t> pass_inner_;
  /// The checkpoint this replay took where the steps after a counted pass begin (0: none).
  uint64_t pass_pre_ = 0;
  ReplaySession::CheckpointPtr diversion_;  ///< the copy that writes went to, if any
  pid_t diversion_rec_ = 0, diversion_tid_ = 0, diversion_pid_ = 0;
  std::optional<StopInfo> immediate_stop_;  ///< an operation's stop, made without replaying
  bool lifted_ = false, stepping_over_ = false;
  bool stepped_ = false;     ///< the last resume was a single step
  Registers resume_regs_{};  ///< the resumed task's registers at the last resume

 public:
  std::atomic<bool> interrupt_{false};   ///< set by Timeline::interrupt() from any thread
  bool stop_at_code_mappings_ = false;   ///< Timeline::set_stop_at_code_mappings
  bool stop_at_process_events_ = false;  ///< Timeline::set_stop_at_process_events
  uint64_t stop_after_event_ = 0;        ///< Timeline::set_stop_after_event (0: none)

 private:
  bool debug_ = getenv("REWIND_DEBUG_TIMELINE") != nullptr;
  /// With debug_: the current scan target's memory, one line a mapping (digest_report), to
  /// name the mappings that differ where the target's registers come back.
  std::string target_report_;
  /// Checkpoints inside intervals (interval_checkpoints_enabled: off with
  /// REWIND_INTERVAL_CHECKPOINTS=0).
  bool inner_on_ = interval_checkpoints_enabled();
  /// Whether reverse continues arm their watchpoints late (Run::watch_at_ms): unless
  /// REWIND_LATE_WATCHPOINTS=0 (to compare, or to rule them out).
  bool late_watch_on_ = [] {
    const char* e = getenv("REWIND_LATE_WATCHPOINTS");
    return !e || std::string(e) != "0";
  }();
};

}  // namespace rwd
