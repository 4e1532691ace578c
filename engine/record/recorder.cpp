#include "recorder.h"

#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <ctime>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "engine/arch/clone_args.h"
#include "engine/arch/insn.h"
#include "engine/arch/siginfo.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/debug_registers.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/seccomp_filter.h"
#include "engine/os/tracee_memory.h"
#include "engine/record/blocking.h"
#include "engine/record/exec_capture.h"
#include "engine/record/file_saver.h"
#include "engine/record/schedule_policy.h"
#include "engine/record/signal_disposition.h"
#include "engine/record/syscall_buffer.h"
#include "engine/record/syscall_capture.h"
#include "engine/ticks/dead_stack.h"
#include "engine/ticks/memory_digest.h"
#include "engine/trace/buffered_records.h"
#include "engine/trace/trace_dir.h"
#include "engine/trace/trace_files.h"
#include "engine/trace/trace_writer.h"
#include "preload/rewind_preload_abi.h"

extern char** environ;

namespace rwd {

namespace {

/// What a task is doing from the recorder's point of view.
enum class RunState : uint8_t {
  Stopped,      ///< held at a ptrace stop, waiting to run user code (in its process's queue)
  UserRunning,  ///< resumed into user code: its process's active task
  InSyscall,    ///< resumed into a syscall (between its entry and exit stops)
};

/// Recorder-side state of one task.
struct Task {
  pid_t tid = 0;
  pid_t pid = 0;  ///< thread group (process) id
  RunState state = RunState::Stopped;
  bool fresh = true;  ///< its first stop (PTRACE_EVENT_STOP) has not been seen
  Registers entry{};  ///< registers at the current syscall's entry
  EntrySnapshot snap;
  /// The syscall that returned ERESTART_RESTARTBLOCK (poll, nanosleep, futex with a timeout):
  /// the kernel resumes it as restart_syscall, whose out-parameters are this call's.
  std::optional<std::pair<Registers, EntrySnapshot>> restart_block;
  bool exec_seen = false;      ///< PTRACE_EVENT_EXEC arrived during this syscall
  bool fork_recorded = false;  ///< the fork-like syscall's event was written at its event stop
  bool skip_syscall = false;   ///< entry was cancelled (rseq): exit reports -ENOSYS
  bool blocked = false;        ///< in a syscall that may wait: others of its process may run
  bool entry_marked = false;   ///< a SyscallEntry event was written for the current syscall
  bool interrupt_requested = false;  ///< PTRACE_INTERRUPT sent, its stop not seen yet
  uint64_t interrupt_tick = 0;       ///< when it was sent
  int pending_sig = 0;               ///< held signal-delivery stop, delivered when scheduled
  uint64_t run_start = 0;            ///< tick when it last started running user code
  uint64_t slice = kDefaultSliceTicks;
  pid_t vfork_child = 0;  ///< held until this vfork child execs or exits
  /// An asynchronous signal that arrived inside a repeated string instruction, put off until
  /// the instruction ends (a hardware breakpoint after it), then sent again.
  int deferred_sig = 0;
  std::array<uint8_t, 128> deferred_si{};
  uint64_t deferred_at = 0;  ///< address of the breakpoint, 0 when none is set
  SyscallBuffer buffer;      ///< its librewind_preload.so buffer, if registered
  /// A signal that interrupted a buffered call the recorder then aborted: sent again once the
  /// library makes that call as a traced syscall, so that it interrupts that call instead.
  int redeliver_sig = 0;
  SigInfo redeliver_si{};
  int64_t skip_result = -ENOSYS;  ///< skip_syscall: the result the exit reports
  /// Records taken from the buffer when the task stopped, for its next event.
  std::vector<uint8_t> buffered;
};

/// Length of the repeated string instruction at the task's rip, or 0 (see insn.h).
size_t rep_insn_at(pid_t tid, uint64_t rip) {
  auto code = read_memory(tid, rip, 15);
  return rep_string_insn_length(code.data(), code.size());
}

/// A thread group (process). At most one of its tasks runs user code at a time; the order in
/// which they do is recorded, which is what makes threads replayable (DESIGN.md "Recording").
struct Group {
  pid_t active = 0;         ///< the task running user code or a prompt syscall, or 0
  std::deque<pid_t> ready;  ///< tasks waiting to run user code
  std::vector<pid_t> members;
  /// The digest exclusions of every syscall buffer in this address space: its tasks' (living
  /// or exited: a thread's buffer outlives it) and those a fork copied from the parent. Replay
  /// writes into all of them, so every point of the process leaves them out. Cleared by exec.
  std::vector<std::pair<uint64_t, uint64_t>> buffer_exclusions;
};

volatile sig_atomic_t g_forward_to = 0;
volatile sig_atomic_t g_tick_due = 0;

void forward_signal(int sig) {
  if (g_forward_to > 0) kill(g_forward_to, sig);
}

void on_timer_signal(int) {
  g_tick_due = 1;
}  // also interrupts the blocking waitpid

/// The timer: every tick while a process has several tasks (preemption, block detection);
/// otherwise once, 50 ms after events start waiting in memory (crash safety).
constexpr long kFlushAfterUs = 50'000;

void set_timer(long first_us, long interval_us) {
  itimerval it{};
  it.it_value.tv_sec = first_us / 1'000'000;
  it.it_value.tv_usec = first_us % 1'000'000;
  it.it_interval.tv_sec = interval_us / 1'000'000;
  it.it_interval.tv_usec = interval_us % 1'000'000;
  setitimer(ITIMER_REAL, &it, nullptr);
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/// True when the kernel has put the task to sleep (state S or D in /proc/TID/stat).
bool task_sleeping(pid_t tid) {
  char state = proc_task_state(tid);
  return state == 'S' || state == 'D';
}

class Recorder {
 public:
  explicit Recorder(const RecordOptions& o) : opts_(o), policy_(o.chaos, o.chaos_seed) {}
  RecordResult run();

 private:
  void handle_stop(Task& t, int status);
  void on_syscall_entry(Task& t);
  void on_syscall_exit(Task& t);
  void on_fork_event(Task& t, int event);
  void on_event_stop(Task& t);
  void on_signal(Task& t, int sig);
  /// When `t` stopped just after a buffered call's syscall that a signal or an interrupt
  /// stopped while it waited, makes the call return RWD_ABORTED instead of restarting, so
  /// that the library makes it again as a traced syscall (rewind_preload_abi.h), and returns
  /// true. The caller resumes `t`.
  bool abort_waiting_call(Task& t);
  void on_exit(Task& t, int status);
  void on_tick();
  void run_user(Task& t, int sig = 0);
  void schedule(Group& g);
  void deliver_signal(Task& t, int sig, const std::array<uint8_t, 128>& si);
  /// Delivers e.signo to the stopped task and writes `e`, with the handler's signal frame.
  void deliver_and_write(Task& t, Event& e);
  /// A Signal event for `t` at its current registers.
  Event signal_event(Task& t, int sig, const SigInfo& si);
  void mark_entries(Group& g, pid_t except);
  void activate(Group& g, Task& t);
  /// Fills e's digest and exclusions at t's current point. Returns false when t's process
  /// started dying meanwhile (SIGKILL from outside: exiting threads write their tid words,
  /// so the digest may hold memory no replay reproduces); the event must not be written.
  bool set_point(Event& e, Task& t);
  void release_vfork_parent(pid_t child);
  void update_timer();
  bool emulate_rdtsc(Task& t, Registers& regs);
  OutputStream output_target(pid_t tid, uint64_t fd);
  /// Writes `e`, with the buffered records its task made before it.
  void write(Event& e);
  /// Moves the records in t's buffer to t.buffered (at a stop that an event of t follows).
  void take_buffered(Task& t);
  /// Single-steps t out of the code where no point may be recorded (syscall buffering).
  void step_out_of_buffer_code(Task& t);
  Group& group(const Task& t) { return groups_[t.pid]; }
  /// Resumes t: into the rest of its syscall (PTRACE_SYSCALL, for the exit stop), or into user
  /// code: PTRACE_CONT when the seccomp filter reports syscalls, else PTRACE_SYSCALL.
  void resume_syscall(Task& t, int sig = 0) {
    resume(t.tid, seccomp_ && t.state != RunState::InSyscall ? PTRACE_CONT : PTRACE_SYSCALL, sig);
  }

  RecordOptions opts_;
  SchedulePolicy policy_;
  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<FileSaver> saver_;
  std::map<pid_t, Task> tasks_;
  std::map<pid_t, Group> groups_;
  std::map<pid_t, int> early_stops_;  ///< stops of new tasks seen before their clone event
  std::map<pid_t, ProcessInfo> processes_;
  std::vector<pid_t> process_order_;
  pid_t root_ = 0;
  int root_status_ = 0;
  uint64_t ticks_ = 0;
  uint64_t last_flush_tick_ = 0;
  bool periodic_ = false;     ///< the timer ticks every policy_.tick_us()
  bool flush_armed_ = false;  ///< the one-shot flush timer is armed
  uint64_t preemptions_ = 0;
  uint64_t ptrace_stops_ = 0;
  uint64_t buffered_syscalls_ = 0;
  uint64_t aborted_calls_ = 0;
  struct stat stdout_st_ {
  }, stderr_st_{};
  bool have_stdout_ = false, have_stderr_ = false;
  bool seccomp_ = false;  ///< syscall buffering: the filter traps syscalls (PTRACE_CONT runs)
};

void Recorder::write(Event& e) {
  if (auto it = tasks_.find(e.tid); it != tasks_.end() && !it->second.buffered.empty())
    e.buffered = std::move(it->second.buffered);
  writer_->write(e);
}

void Recorder::take_buffered(Task& t) {
  if (!t.buffer.addr) return;
  std::vector<uint8_t> more = t.buffer.take_records(t.tid);
  t.buffer.add_abort_mark(more);  // the last record it read before now, if any
  if (more.empty()) return;
  try {
    buffered_syscalls_ += parse_buffered_records(more).size();
  } catch (const TraceError&) {  // the program wrote over its buffer: replay could not use it
    throw Error("task " + std::to_string(t.tid) +
                " holds malformed records in its syscall buffer (the program overwrote it?)");
  }
  t.buffered.insert(t.buffered.end(), more.begin(), more.end());
}

void Recorder::step_out_of_buffer_code(Task& t) {
  // A step per instruction, and per byte of the `rep movsb` that copies a record's out-data
  // (a record holds less than the buffer): slow, but only for a signal that arrives there.
  for (int i = 0; i < RWD_BUFFER_SIZE + 4096; ++i) {
    if (!t.buffer.must_not_stop_at(get_regs(t.tid).rip)) return;
    resume(t.tid, PTRACE_SINGLESTEP, 0);
    int st = wait_task(t.tid);
    ++ptrace_stops_;
    if (WIFSTOPPED(st) && WSTOPSIG(st) == RWD_DESCHED_SIGNAL &&
        t.buffer.is_desched_signal(RWD_DESCHED_SIGNAL, get_siginfo(t.tid))) {
      t.buffer.settle_desched(t.tid);  // signalled before the counter went off: not a step
      continue;
    }
    if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
      throw Error("task " + std::to_string(t.tid) +
                  " stopped unexpectedly while leaving the syscall buffer code");
  }
}

OutputStream Recorder::output_target(pid_t tid, uint64_t fd) {
  if (fd > INT_MAX || (!have_stdout_ && !have_stderr_)) return OutputStream::None;
  struct stat st;
  std::string p = "/proc/" + std::to_string(tid) + "/fd/" + std::to_string(fd);
  if (::stat(p.c_str(), &st) != 0) return OutputStream::None;
  bool out = have_stdout_ && same_file(st, stdout_st_);
  bool err = have_stderr_ && same_file(st, stderr_st_);
  if (out && err) return fd == 2 ? OutputStream::Stderr : OutputStream::Stdout;
  return out ? OutputStream::Stdout : err ? OutputStream::Stderr : OutputStream::None;
}

void Recorder::update_timer() {
  bool want = false;
  for (auto& [pid, g] : groups_) want |= g.members.size() > 1;
  if (want != periodic_) {
    periodic_ = want;
    flush_armed_ = false;
    long us = want ? long(policy_.tick_us()) : 0;
    set_timer(us, us);
  }
}

RecordResult Recorder::run() {
  std::string path = find_program(opts_.argv[0]);
  if (path.empty()) throw Error("cannot find program '" + opts_.argv[0] + "'");
  std::string dir;
  std::string root_dir;
  if (!opts_.output_dir.empty()) {
    dir = opts_.output_dir;
    if (::mkdir(dir.c_str(), 0755) != 0 && !(errno == EEXIST && is_empty_dir(dir)))
      throw SystemError("create trace directory " + dir, errno);
  } else {
    root_dir = traces_root();
    dir = create_trace_dir(root_dir, path.substr(path.find_last_of('/') + 1));
  }
  if (::mkdir((dir + "/" + kFilesDir).c_str(), 0755) != 0)
    throw SystemError("create " + dir + "/" + kFilesDir, errno);
  saver_ = std::make_unique<FileSaver>(dir + "/" + kFilesDir);
  TraceMeta meta;
  meta.argv = opts_.argv;
  for (char** e = environ; *e; ++e) meta.env.push_back(*e);
  have_stdout_ = fstat(1, &stdout_st_) == 0;
  have_stderr_ = fstat(2, &stderr_st_) == 0;
  if (opts_.syscall_buffer) {
    std::string lib = preload_library_path();
    if (lib.empty()) {
      fprintf(stderr,
              "rewind: librewind_preload.so is not next to rewind; recording without "
              "syscall buffering\n");
    } else {
      std::vector<const struct stat*> outputs;
      if (have_stdout_) outputs.push_back(&stdout_st_);
      if (have_stderr_) outputs.push_back(&stderr_st_);
      meta.env = preload_environment(meta.env, lib, outputs);
      seccomp_ = true;
    }
  }
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd)) meta.cwd = cwd;
  meta.start_time = int64_t(time(nullptr));
  meta.ticks = "none";
  meta.exe_file = saver_->save(path, path);

  std::vector<char*> argv;
  for (auto& a : opts_.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& v : meta.env) envp.push_back(const_cast<char*>(v.c_str()));
  envp.push_back(nullptr);
  root_ = spawn_traced(path.c_str(), argv.data(), envp.data(), nullptr,
                       seccomp_ ? install_syscall_filter : nullptr);
  // Inherited signal state is part of the program's input: replay starts it the same way.
  ProcSignals masks = read_proc_signals(root_);
  meta.sig_ignored = masks.ignored;
  meta.sig_blocked = masks.blocked;
  // The terminal's SIGINT/SIGQUIT go to the program (same process group); rewind itself waits
  // for it to react, like a shell does. SIGTERM/SIGHUP sent to rewind are passed on.
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  g_forward_to = root_;
  signal(SIGTERM, forward_signal);
  signal(SIGHUP, forward_signal);
  writer_ = std::make_unique<TraceWriter>(dir, meta);
  if (!root_dir.empty()) set_latest_trace(root_dir, dir);
  Task& root = tasks_[root_];
  root.tid = root.pid = root_;
  root.fresh = false;
  Group& rg = groups_[root_];
  rg.members.push_back(root_);
  rg.active = root_;
  processes_[root_] = ProcessInfo{root_, 0, false, 0, opts_.argv};
  process_order_.push_back(root_);
  on_syscall_entry(root);  // spawn_traced left it at the entry of its execve

  struct sigaction sa {};
  sa.sa_handler = on_timer_signal;  // no SA_RESTART: the timer interrupts waitpid
  sigaction(SIGALRM, &sa, nullptr);
  try {
    while (!tasks_.empty()) {
      if (g_tick_due) {
        g_tick_due = 0;
        on_tick();
      }
      if (!periodic_ && !flush_armed_ && writer_->has_pending()) {
        set_timer(kFlushAfterUs, 0);
        flush_armed_ = true;
      }
      int status = 0;
      pid_t tid = waitpid(-1, &status, __WALL);
      if (tid < 0) {
        if (errno == EINTR) continue;
        break;
      }
      ++ptrace_stops_;
      auto it = tasks_.find(tid);
      if (it == tasks_.end()) {
        early_stops_[tid] = status;
        continue;
      }
      try {
        handle_stop(it->second, status);
      } catch (const SystemError& e) {
        // ESRCH: a task we held stopped was killed from outside (kill -9 of the program)
        // while we handled its stop. Its exit, and its threads', are the next stops.
        if (e.error() != ESRCH) throw;
      }
    }
  } catch (const Error&) {
    set_timer(0, 0);
    for (auto& [tid, t] : tasks_) kill(tid, SIGKILL);
    while (waitpid(-1, nullptr, __WALL) > 0) {
    }
    writer_->flush();
    throw;
  }

  set_timer(0, 0);
  TraceSummary summary;
  summary.root_status = root_status_;
  for (pid_t p : process_order_) summary.processes.push_back(processes_[p]);
  writer_->finish(summary);
  RecordResult r;
  r.trace_dir = dir;
  r.exit_code = exit_code_for_status(root_status_);
  r.events = writer_->last_event();
  r.preemptions = preemptions_;
  r.ptrace_stops = ptrace_stops_;
  r.buffered_syscalls = buffered_syscalls_;
  r.aborted_calls = aborted_calls_;
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  r.peak_memory = uint64_t(ru.ru_maxrss) * 1024;  // getrusage(2): ru_maxrss is in kilobytes
  return r;
}

/// The kernel's ERESTART_RESTARTBLOCK (include/linux/errno.h): the call resumes as
/// restart_syscall.
constexpr int64_t kErestartRestartblock = -516;

/// Ticks after which an unanswered PTRACE_INTERRUPT is sent again.
constexpr uint64_t kInterruptRetryTicks = 200;

void Recorder::on_tick() {
  if (!periodic_) {  // the one-shot flush timer
    flush_armed_ = false;
    writer_->flush();
    return;
  }
  ++ticks_;
  if (ticks_ - last_flush_tick_ >= kFlushAfterUs / policy_.tick_us()) {
    last_flush_tick_ = ticks_;
    writer_->flush();
  }
  for (auto& [pid, g] : groups_) {
    if (!g.active || g.ready.empty()) continue;
    Task& t = tasks_.at(g.active);
    if (t.state == RunState::UserRunning && !t.interrupt_requested &&
        ticks_ - t.run_start >= t.slice) {
      // Time slice over and another task waits: stop this one where it is.
      if (ptrace(PTRACE_INTERRUPT, t.tid, nullptr, nullptr) == 0) {
        t.interrupt_requested = true;
        t.interrupt_tick = ticks_;
      }
    } else if (t.state == RunState::UserRunning && t.interrupt_requested &&
               ticks_ - t.interrupt_tick >= kInterruptRetryTicks) {
      // The interrupt's stop never came (seen once in 30 chaos recordings of a spinning
      // thread: the task ran on, unpreempted, forever). Ask again; a second stop is harmless.
      if (ptrace(PTRACE_INTERRUPT, t.tid, nullptr, nullptr) == 0) t.interrupt_tick = ticks_;
    } else if (t.state == RunState::InSyscall && !t.blocked && t.vfork_child == 0 &&
               task_sleeping(t.tid)) {
      // A syscall expected to return promptly is waiting: let the others run meanwhile.
      t.blocked = true;
      g.active = 0;
      schedule(g);
    }
  }
}

void Recorder::handle_stop(Task& t, int status) {
  if (WIFEXITED(status) || WIFSIGNALED(status)) return on_exit(t, status);
  if (!WIFSTOPPED(status)) return;
  int sig = WSTOPSIG(status), event = status >> 16;
  if (sig == (SIGTRAP | 0x80)) {
    int kind = syscall_stop_kind(t.tid);
    if (kind == PTRACE_SYSCALL_INFO_ENTRY) return on_syscall_entry(t);
    if (kind == PTRACE_SYSCALL_INFO_EXIT) return on_syscall_exit(t);
    return resume_syscall(t);
  }
  switch (event) {
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE:
      return on_fork_event(t, event);
    case PTRACE_EVENT_EXEC:
      t.exec_seen = true;
      return resume_syscall(t);
    case PTRACE_EVENT_STOP:
      return on_event_stop(t);
    case PTRACE_EVENT_SECCOMP:
      // The filter's report of a syscall's entry; one already stopped at (the first execve,
      // seen by spawn_traced's PTRACE_SYSCALL) goes on to its exit.
      if (t.state == RunState::InSyscall) return resume_syscall(t);
      return on_syscall_entry(t);
    default:
      return on_signal(t, sig);
  }
}

void Recorder::run_user(Task& t, int sig) {
  t.state = RunState::UserRunning;
  t.run_start = ticks_;
  t.slice = policy_.slice();
  resume_syscall(t, sig);
}

void Recorder::mark_entries(Group& g, pid_t except) {
  // Tasks waiting in a syscall while another runs: replay must bring them to the syscall's
  // entry before the other's next events, as their code up to it ran first.
  for (pid_t m : g.members) {
    Task& x = tasks_.at(m);
    if (m == except || x.state != RunState::InSyscall || !x.blocked || x.entry_marked) continue;
    Event e;
    e.kind = EventKind::SyscallEntry;
    e.tid = x.tid;
    e.regs = x.entry;
    write(e);
    x.entry_marked = true;
  }
}

void Recorder::activate(Group& g, Task& t) {
  // Before t runs user code, every task of its process that waits in a syscall must be
  // brought to that syscall's entry in replay: its code up to there ran before t's.
  mark_entries(g, t.tid);
  g.active = t.tid;
}

bool Recorder::set_point(Event& e, Task& t) {
  // Buffers that syscalls in flight in other tasks may write are left out of the digest.
  // So are the syscall buffers' records and control words (replay fills them in ahead).
  // And so is the dead part of every task's stack (dead_stack.h): what lies there may differ.
  const Group& g = group(t);
  e.exclusions = g.buffer_exclusions;
  std::vector<ProcMapping> maps = read_proc_maps(t.tid);
  for (pid_t m : g.members) {
    Task& x = tasks_.at(m);
    std::optional<uint64_t> rsp;
    if (m == t.tid) {
      rsp = e.regs.rsp;
    } else if (x.state == RunState::InSyscall) {
      rsp = x.entry.rsp;
      if (const SyscallSpec* spec = syscall_spec(long(x.entry.orig_rax))) {
        auto ranges = possible_outputs(x.tid, *spec, x.entry, x.snap);
        e.exclusions.insert(e.exclusions.end(), ranges.begin(), ranges.end());
      }
    } else if (Registers r; !x.fresh && try_get_regs(x.tid, r)) {
      rsp = r.rsp;
    }
    if (rsp)
      if (auto dead = dead_stack(maps, *rsp)) e.exclusions.push_back(*dead);
  }
  e.digest = digest_memory(t.tid, maps, e.exclusions);
  if (const char* f = getenv("REWIND_DEBUG_DIGEST")) {
    if (FILE* out = fopen(f, "a")) {
      fprintf(out, "record point (task %d)\n%s", t.tid, digest_report(t.tid).c_str());
      fclose(out);
    }
  }
  // A SIGKILL ends the ptrace stop of every thread before any of them exits (it is queued to
  // all under one lock, kernel/signal.c complete_signal), so a task still stopped now had no
  // dying thread change memory while the digest was taken.
  Registers now;
  return try_get_regs(t.tid, now);
}

void Recorder::schedule(Group& g) {
  if (g.active || g.ready.empty()) return;
  size_t i = policy_.pick(g.ready.size());
  pid_t next = g.ready[i];
  g.ready.erase(g.ready.begin() + long(i));
  Task& t = tasks_.at(next);
  activate(g, t);
  if (t.pending_sig) {
    int sig = t.pending_sig;
    t.pending_sig = 0;
    return deliver_signal(t, sig, get_siginfo(t.tid));
  }
  run_user(t);
}

void Recorder::on_syscall_entry(Task& t) {
  t.entry = get_regs(t.tid);
  t.state = RunState::InSyscall;
  t.exec_seen = t.fork_recorded = t.skip_syscall = t.entry_marked = t.blocked = false;
  take_buffered(t);
  if (t.redeliver_sig) {
    // The call an abort made traced (its first syscall since): the signal that interrupted the
    // buffered call interrupts this one, with the siginfo it came with (on_signal).
    t.deferred_sig = std::exchange(t.redeliver_sig, 0);
    t.deferred_si = t.redeliver_si;
    syscall(SYS_tgkill, t.pid, t.tid, t.deferred_sig);
  }
  long nr = long(t.entry.orig_rax);
  if (nr == RWD_SYS_REGISTER_BUFFER) {
    // librewind_preload.so's registration: rewind answers it, the kernel never sees it.
    Registers r = t.entry;
    r.orig_rax = uint64_t(-1);
    set_regs(t.tid, r);
    t.skip_syscall = true;
    t.skip_result =
        seccomp_ ? t.buffer.set_from_call(t.pid, r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9) : -ENOSYS;
    if (t.skip_result >= 0) group(t).buffer_exclusions.push_back(t.buffer.digest_exclusion());
    return resume_syscall(t);
  }
  const SyscallSpec* spec = syscall_spec(nr);
  if (!spec)
    throw UnsupportedError("syscall " + std::to_string(nr) + " (" + syscall_name(nr) +
                           ") is not supported yet");
  Group& g = group(t);
  if (spec->has(kExec) && g.members.size() > 1)
    throw UnsupportedError("execve from a multi-threaded process is not supported yet");
  if (spec->has(kForkLike) && decode_clone_args(t.tid, t.entry).shared_memory_process())
    throw UnsupportedError(
        "the program creates a process sharing its memory (clone with CLONE_VM but not "
        "CLONE_THREAD); this is not supported yet");
  if (spec->record == RecordPolicy::Enosys) {
    // Not run: the program sees it unavailable (syscalls.py says why for each).
    Registers r = t.entry;
    r.orig_rax = uint64_t(-1);
    set_regs(t.tid, r);
    t.skip_syscall = true;
    t.skip_result = -ENOSYS;
  }
  t.snap = snapshot_entry(t.tid, *spec, t.entry);
  if (spec->has(kExit)) {
    Event e;  // no exit stop follows; the Exit event comes with the task's end
    e.kind = EventKind::Syscall;
    e.tid = t.tid;
    e.regs = t.entry;
    write(e);
  } else if (syscall_may_block(t.entry) && g.active == t.tid) {
    t.blocked = true;
    g.active = 0;
    resume_syscall(t);
    return schedule(g);
  }
  resume_syscall(t);
}

void Recorder::on_syscall_exit(Task& t) {
  Registers regs = get_regs(t.tid);
  long nr = long(t.entry.orig_rax);
  int64_t result = int64_t(regs.rax);
  if (t.skip_syscall) {
    regs.rax = uint64_t(t.skip_result);
    result = t.skip_result;
    set_regs(t.tid, regs);
  }
  if (nr == RWD_SYS_REGISTER_BUFFER) {
    Event e;
    e.kind = EventKind::Syscall;
    e.tid = t.tid;
    e.regs = t.entry;
    e.result = result;
    write(e);
    t.state = RunState::UserRunning;
    return resume_syscall(t);
  }
  if (syscall_has(nr, kExec) && t.exec_seen && result == 0) {
    Event e = capture_exec(t.tid, *saver_);
    write(e);
    t.buffer = SyscallBuffer{};  // the new image registers its own
    group(t).buffer_exclusions.clear();
    processes_[t.pid].argv = e.argv;
    release_vfork_parent(t.tid);
  } else if (!(syscall_has(nr, kForkLike) && t.fork_recorded)) {
    const SyscallSpec* spec = syscall_spec(nr);
    Event e;
    e.kind = EventKind::Syscall;
    e.tid = t.tid;
    e.regs = t.entry;
    e.result = result;
    if (nr == SYS_restart_syscall && t.restart_block) {
      // What the interrupted call writes, at its own arguments (kernel/signal.c,
      // restart_syscall; fs/select.c do_restart_poll...).
      const auto& [entry, snap] = *t.restart_block;
      if (const SyscallSpec* orig = syscall_spec(long(entry.orig_rax)))
        e.memory = capture_outputs(t.tid, *orig, entry, result, snap);
    } else {
      e.memory = capture_outputs(t.tid, *spec, t.entry, result, t.snap);
    }
    if (nr != SYS_restart_syscall && result == kErestartRestartblock)
      t.restart_block.emplace(t.entry, t.snap);
    else if (nr != SYS_restart_syscall || !is_restart_result(result))
      t.restart_block.reset();  // kept while restart_syscall is interrupted again
    if (spec->output != OutputKind::None && result > 0)
      e.output = output_target(t.tid, t.entry.rdi);
    if (nr == SYS_mmap && result >= 0 && !(t.entry.r10 & MAP_ANONYMOUS)) {
      std::string fd = "/proc/" + std::to_string(t.tid) + "/fd/" + std::to_string(int(t.entry.r8));
      char target[PATH_MAX] = {};
      ssize_t n = ::readlink(fd.c_str(), target, sizeof target - 1);
      e.file = saver_->save(fd, n > 0 ? std::string(target, size_t(n)) : fd);
    }
    write(e);
  }
  Group& g = group(t);
  if (t.blocked) {
    t.blocked = false;
    if (g.active) {  // another task runs: wait for a turn
      t.state = RunState::Stopped;
      g.ready.push_back(t.tid);
      return;
    }
    activate(g, t);
  }
  if (g.active == t.tid && t.state == RunState::InSyscall) {
    t.state = RunState::UserRunning;  // a prompt syscall: same slice goes on
    return resume_syscall(t);
  }
  run_user(t);
}

void Recorder::on_fork_event(Task& t, int event) {
  pid_t child = pid_t(get_event_msg(t.tid));
  Event e;
  e.kind = EventKind::Syscall;
  e.tid = t.tid;
  e.regs = t.entry;
  e.result = child;
  e.child_tid = child;
  write(e);
  t.fork_recorded = true;
  Task& c = tasks_[child];
  c.tid = child;
  c.pid = event == PTRACE_EVENT_CLONE && decode_clone_args(t.tid, t.entry).thread() ? t.pid : child;
  Group& cg = groups_[c.pid];
  if (c.pid == child) {  // a copy of (or, vfork, the same) memory, with the parent's buffers
    c.buffer = t.buffer;
    cg.buffer_exclusions = group(t).buffer_exclusions;
  }
  cg.members.push_back(child);
  if (cg.members.size() == 2 && cg.active) {
    // Competition starts now: the running task's time slice starts now too.
    Task& a = tasks_.at(cg.active);
    a.run_start = ticks_;
    a.slice = policy_.slice();
  }
  if (c.pid == child) {
    processes_[child] = ProcessInfo{child, t.pid, false, 0, processes_[t.pid].argv};
    process_order_.push_back(child);
  }
  update_timer();
  if (event == PTRACE_EVENT_VFORK) {
    // The parent cannot run before the child execs or exits; holding it here keeps the
    // child's events before the parent's in the trace, as replay needs.
    t.vfork_child = child;
  } else {
    resume_syscall(t);
  }
  if (auto it = early_stops_.find(child); it != early_stops_.end()) {
    int st = it->second;
    early_stops_.erase(it);
    handle_stop(c, st);
  }
}

void Recorder::release_vfork_parent(pid_t child) {
  for (auto& [ptid, p] : tasks_)
    if (p.vfork_child == child) {
      p.vfork_child = 0;
      resume_syscall(p);
    }
}

void Recorder::on_event_stop(Task& t) {
  Group& g = group(t);
  if (t.fresh) {  // a new task's first stop: it waits for its turn to run
    t.fresh = false;
    t.state = RunState::Stopped;
    g.ready.push_back(t.tid);
    return schedule(g);
  }
  if (t.interrupt_requested) {
    t.interrupt_requested = false;
    if (g.active == t.tid && !g.ready.empty()) {
      // Waiting in a buffered call that no desched counter watched: made traced, it lets
      // the others run (its wait is seen then).
      if (abort_waiting_call(t)) return resume_syscall(t);
      uint64_t rip = get_regs(t.tid).rip;
      if (rep_insn_at(t.tid, rip) || t.buffer.must_not_stop_at(rip))
        return resume_syscall(t);  // inside a string instruction: interrupt again next tick
      Event e;
      e.kind = EventKind::Sched;
      e.tid = t.tid;
      e.regs = get_regs(t.tid);
      if (!set_point(e, t)) return;  // killed: its exit comes next
      take_buffered(t);
      write(e);
      ++preemptions_;
      t.state = RunState::Stopped;
      g.active = 0;
      g.ready.push_back(t.tid);
      return schedule(g);
    }
  }
  resume_syscall(t);  // a group-stop, or an interrupt with nobody else to run
}

bool Recorder::emulate_rdtsc(Task& t, Registers& regs) {
  uint8_t insn[3] = {};
  auto bytes = read_memory(t.tid, regs.rip, 3);
  std::copy(bytes.begin(), bytes.end(), insn);
  unsigned aux = 0;
  uint64_t tsc;
  if (bytes.size() >= 2 && insn[0] == 0x0f && insn[1] == 0x31) {
    tsc = __rdtsc();
    regs.rip += 2;
  } else if (bytes.size() == 3 && insn[0] == 0x0f && insn[1] == 0x01 && insn[2] == 0xf9) {
    tsc = __rdtscp(&aux);
    regs.rcx = aux;
    regs.rip += 3;
  } else {
    return false;
  }
  regs.rax = tsc & 0xffffffffu;
  regs.rdx = tsc >> 32;
  set_regs(t.tid, regs);
  take_buffered(t);
  Event e;
  e.kind = EventKind::Rdtsc;
  e.tid = t.tid;
  e.regs = regs;
  write(e);
  return true;
}

Event Recorder::signal_event(Task& t, int sig, const SigInfo& si) {
  Event e;
  e.kind = EventKind::Signal;
  e.tid = t.tid;
  e.regs = get_regs(t.tid);
  e.signo = sig;
  e.siginfo = si;
  return e;
}

void Recorder::deliver_signal(Task& t, int sig, const std::array<uint8_t, 128>& si) {
  // The desched counter, if the library has it on, would signal every step's stop.
  if (t.buffer.must_not_stop_at(get_regs(t.tid).rip)) t.buffer.settle_desched(t.tid);
  step_out_of_buffer_code(t);
  Registers regs = get_regs(t.tid);
  if (size_t len = rep_insn_at(t.tid, regs.rip)) {
    // No breakpoint can find a point inside a string instruction again: let it finish.
    t.deferred_sig = sig;
    t.deferred_si = si;
    t.deferred_at = regs.rip + len;
    set_exec_breakpoint(t.tid, t.deferred_at);
    t.state = RunState::UserRunning;
    return resume_syscall(t, 0);
  }
  Event e = signal_event(t, sig, si);
  if (!set_point(e, t)) return;  // killed: its exit comes next
  take_buffered(t);
  t.state = RunState::UserRunning;
  t.run_start = ticks_;
  t.slice = policy_.slice();
  deliver_and_write(t, e);
}

void Recorder::deliver_and_write(Task& t, Event& e) {
  if (!(read_proc_signals(t.tid).caught & (1ull << (e.signo - 1)))) {
    write(e);  // no handler: the default action, no signal frame
    return resume_syscall(t, e.signo);
  }
  // A handler runs. The frame the kernel builds for it is not fully determined by the
  // program (its XSAVE area depends on which FPU state the CPU tracks as in use), so it is
  // recorded: single-stepping into the delivery stops at the handler's first instruction
  // with the frame in place (kernel/signal.c, signal_delivered).
  resume(t.tid, PTRACE_SINGLESTEP, e.signo);
  int st = wait_task(t.tid);
  if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP && (st >> 16) == 0) {
    uint64_t sp = get_regs(t.tid).rsp;
    constexpr uint64_t kRedZone = 128, kMaxFrame = 64 << 10, kAltFrame = 16 << 10;
    uint64_t end =
        e.regs.rsp > sp && e.regs.rsp - sp < kMaxFrame ? e.regs.rsp - kRedZone : sp + kAltFrame;
    MemoryRegion frame;
    frame.addr = sp;
    frame.bytes = read_memory(t.tid, sp, end - sp);
    e.memory.push_back(std::move(frame));
    write(e);
    return resume_syscall(t, 0);
  }
  write(e);
  handle_stop(t, st);  // it ended, or stopped for another reason first
}

bool Recorder::abort_waiting_call(Task& t) {
  if (!t.buffer.addr) return false;
  Registers r = get_regs(t.tid);
  int64_t result = int64_t(r.rax);
  if (r.rip != RWD_UNTRACED_IP || !(is_restart_result(result) || result == -EINTR)) return false;
  // Not restarted: the call returns to the library, which abandons its record (replay's
  // library finds the abort mark the task's next event carries) and makes it traced.
  r.rax = uint64_t(int64_t(RWD_ABORTED));
  set_regs(t.tid, r);
  t.buffer.aborted_nr = int64_t(r.orig_rax);
  ++aborted_calls_;
  return true;
}

void Recorder::on_signal(Task& t, int sig) {
  auto si = get_siginfo(t.tid);
  bool desched = t.buffer.is_desched_signal(sig, si);
  // The counter would signal again at this very stop's context switch: off until the
  // library's next call that may block.
  if (desched) t.buffer.settle_desched(t.tid);
  if (abort_waiting_call(t)) {
    if (!desched) {
      t.redeliver_sig = sig;
      t.redeliver_si = si;
    }
    return resume_syscall(t, 0);
  }
  // The counter's signal when the call did not wait (the task was switched out around it):
  // rewind's, not the program's.
  if (desched) return resume_syscall(t, 0);
  if (t.deferred_at && sig == SIGTRAP && get_regs(t.tid).rip == t.deferred_at) {
    // The string instruction is done: send the put-off signal again, to arrive here.
    clear_exec_breakpoint(t.tid);
    t.deferred_at = 0;
    syscall(SYS_tgkill, t.pid, t.tid, t.deferred_sig);
    return resume_syscall(t, 0);
  }
  if (t.deferred_sig && sig == t.deferred_sig && sent_by_this_process(si)) {
    si = t.deferred_si;  // as it first arrived
    set_siginfo(t.tid, si);
    t.deferred_sig = 0;
  }
  if (sig == SIGSEGV && siginfo_code(si) == SI_KERNEL) {
    Registers regs = get_regs(t.tid);
    if (emulate_rdtsc(t, regs)) return resume_syscall(t);
  }
  if (is_synchronous_fault(sig, si)) {  // raised by the active task's own instruction
    take_buffered(t);
    Event e = signal_event(t, sig, si);
    e.synchronous = true;
    return deliver_and_write(t, e);
  }
  if (signal_is_ignored(t.tid, sig)) {
    // No handler and the default action is to ignore: delivering it changes nothing (an
    // interrupted syscall restarts either way), so it is not part of the recording.
    return resume_syscall(t, 0);
  }
  Group& g = group(t);
  if (g.active == 0 || g.active == t.tid) {
    activate(g, t);
    return deliver_signal(t, sig, si);
  }
  // Another task of the process runs user code: the handler waits for this task's turn.
  t.pending_sig = sig;
  t.state = RunState::Stopped;
  if (std::find(g.ready.begin(), g.ready.end(), t.tid) == g.ready.end()) g.ready.push_back(t.tid);
}

void Recorder::on_exit(Task& t, int status) {
  Event e;
  e.kind = EventKind::Exit;
  e.tid = t.tid;
  e.status = status;
  write(e);
  if (auto it = processes_.find(t.pid); it != processes_.end() && t.tid == t.pid) {
    it->second.ended = true;
    it->second.status = status;
  }
  if (t.tid == root_) root_status_ = status;
  release_vfork_parent(t.tid);
  Group& g = group(t);
  std::erase(g.members, t.tid);
  std::erase(g.ready, t.tid);
  bool was_active = g.active == t.tid;
  if (was_active) g.active = 0;
  pid_t pid = t.pid;
  tasks_.erase(t.tid);
  if (g.members.empty()) {
    groups_.erase(pid);
  } else if (was_active) {
    schedule(g);
  }
  update_timer();
}

}  // namespace

std::string find_program(const std::string& name) {
  auto ok = [](const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return ok(name) ? name : "";
  const char* path = getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t i = 0;
  while (i <= dirs.size()) {
    size_t j = dirs.find(':', i);
    if (j == std::string::npos) j = dirs.size();
    std::string d = dirs.substr(i, j - i);
    std::string p = (d.empty() ? "." : d) + "/" + name;
    if (ok(p)) return p;
    i = j + 1;
  }
  return "";
}

RecordResult record(const RecordOptions& opts) {
  Recorder r(opts);
  return r.run();
}

}  // namespace rwd
