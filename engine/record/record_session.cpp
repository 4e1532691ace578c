// The recording session's loop: starting the program, waiting for its tasks' stops and
// dispatching them, single steps, and the end of the recording (record_session.h). The
// scheduler's turns and time slices are in record_turns.cpp.
#include "engine/record/record_session.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <span>

#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/perf_warmup.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/seccomp_filter.h"
#include "engine/os/step_flags.h"
#include "engine/record/blocking.h"
#include "engine/record/record_setup.h"
#include "engine/trace/buffered_records.h"
#include "engine/trace/trace_dir.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

void RecordSession::write(Event& e) {
  if (auto it = tasks_.find(e.tid); it != tasks_.end() && !it->second.buffered.empty())
    e.buffered = std::move(it->second.buffered);
  writer_->write(e);
}

void RecordSession::take_buffered(RecordTask& t) {
  if (!t.buffer.addr) return;
  const size_t start = t.buffered.size();
  t.buffer.take_records(t.tid, t.buffered);  // appended in place: records can be megabytes
  t.buffer.add_abort_mark(t.buffered);       // the last record it read before now, if any
  if (t.buffered.size() == start) return;
  try {
    buffered_syscalls_ += parse_buffered_records(std::span(t.buffered).subspan(start)).size();
  } catch (const TraceError&) {  // the program wrote over its buffer: replay could not use it
    t.buffered.resize(start);
    throw Error("task " + std::to_string(t.tid) +
                " holds malformed records in its syscall buffer (the program overwrote it?)");
  }
}

int RecordSession::step_insn(RecordTask& t) {
  for (;;) {
    resume(t.tid, PTRACE_SINGLESTEP, 0);
    int st = wait_task(t.tid);
    ++ptrace_stops_;
    // Signals of rewind's own that come before the instruction has run (a synchronous trap
    // is reported first: kernel/signal.c, dequeue_synchronous_signal): dropped, and the step
    // made again.
    if (WIFSTOPPED(st) && WSTOPSIG(st) == RWD_DESCHED_SIGNAL &&
        t.buffer.is_desched_signal(RWD_DESCHED_SIGNAL, get_siginfo(t.tid))) {
      t.buffer.settle_desched(t.tid);  // signalled before the counter went off: not a step
      continue;
    }
    if (WIFSTOPPED(st) && WSTOPSIG(st) == kSliceSignal &&
        t.cpu_clock.is_slice_signal(kSliceSignal, get_siginfo(t.tid)))
      continue;  // a chaos slice ran out during the step: dropped, the slice ends later
    return st;
  }
}

namespace {
/// The registers of the syscall `r` stands on, as its entry stop would show them (the
/// number in orig_rax).
Registers syscall_entry_at_insn(Registers r) {
  r.orig_rax = r.rax;
  return r;
}
}  // namespace

bool RecordSession::step_out_of_buffer_code(RecordTask& t) {
  // A step per instruction, and per byte of the `rep movsb` that copies a record's out-data
  // (a record holds less than the buffer): slow, but only for a signal that arrives there.
  for (int i = 0; i < RWD_BUFFER_SIZE + 4096; ++i) {
    Registers r = get_regs(t.tid);
    if (!t.buffer.must_not_stop_at(r.rip)) return i > 0;
    // The desched counter, if the library has it on, would signal every step's stop.
    if (i == 0) t.buffer.settle_desched(t.tid);
    if (r.rip == RWD_UNTRACED_PAGE && syscall_may_block(syscall_entry_at_insn(r))) {
      // At the buffered call's own `syscall`. Stepped, a call that waits (gdb's poll for the
      // very SIGCHLD being delivered) would wait with nothing to wake it: the signal is held
      // here and the counter that would stop it is off. Given up instead, as at a desched
      // stop: it returns RWD_ABORTED without entering the kernel (rip past the instruction;
      // the library clears rcx and r11 on both of its paths), the library abandons its record
      // and makes the call traced once the handler ran; replay's library finds the abort mark.
      // Not a call that returns promptly: stepped, as any instruction. Among those are the
      // library's own probes (its mask, a file's type), which go on after an abort to buffer
      // the program's call, and an abort mark followed by more records is one replay cannot
      // place (it must be an event's last record: buffered_records.h).
      r.rip = RWD_UNTRACED_IP;
      give_up_buffered_call(t, r, int64_t(r.rax));
      continue;
    }
    // A fast interval timer's next expiry during the steps waits with the signal being
    // delivered (deliver_signal sends it again afterwards).
    int st = step_insn_putting_off(t);
    if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP)
      throw Error("task " + std::to_string(t.tid) +
                  " stopped unexpectedly while leaving the syscall buffer code");
  }
  return true;
}

void RecordSession::update_timer() {
  bool want = false;
  for (AddressSpace* s : turn_takers()) want |= turn_task_count(*s) > 1;
  // A tracer's interrupt that could not stop its tracee yet is asked again at each tick.
  for (const auto& [tid, t] : tasks_) want |= t.tracer_interrupt_pending;
  // So is the preemption that a write into another process's memory waits for.
  for (AddressSpace* s : spaces()) want |= s->turns->held_for_write != 0;
  if (want != periodic_) {
    periodic_ = want;
    flush_armed_ = false;
    long us = want ? long(policy_.tick_us()) : 0;
    set_tick_timer(us, us);
  }
}

RecordResult RecordSession::run() {
  // The desched counters' first open, in the program's start, would wait 8-20 ms for the
  // kernel to turn per-task perf events on: turned on meanwhile (perf_warmup.h).
  PerfSchedWarmup warm;
  RecordSetup setup = prepare_recording(opts_);
  saver_ = std::make_unique<FileSaver>(setup.dir + "/" + kFilesDir);
  TraceMeta& meta = setup.meta;
  stdout_st_ = setup.stdout_st;
  stderr_st_ = setup.stderr_st;
  proc_dev_ = setup.proc_dev;
  seccomp_ = setup.syscall_buffer;
  const std::string& path = setup.program;
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
  handle_own_signals(root_);
  writer_ = std::make_unique<TraceWriter>(setup.dir, meta);
  if (!setup.traces_root.empty()) set_latest_trace(setup.traces_root, setup.dir);
  RecordTask& root = tasks_[root_];
  root.tid = root.pid = root_;
  root.fresh = false;
  ThreadGroup& rg = groups_[root_];
  rg.members.push_back(root_);
  rg.space->tasks.push_back(root_);
  rg.space->turns->active = root_;
  processes_[root_] = ProcessInfo{root_, 0, false, 0, opts_.argv};
  process_order_.push_back(root_);
  // The recorder runs one task's user code at a time; a stopped task's registers change only
  // when a task is resumed or waited for, which drops the copy (ptrace_ops.h).
  RegisterCacheScope registers;
  on_syscall_entry(root);  // spawn_traced left it at the entry of its execve

  try {
    while (!tasks_.empty()) {
      if (take_tick()) on_tick();
      if (take_slice_signal()) end_slices();
      if (take_end_request()) end_on_request();
      release_held_expiries();
      if (!periodic_ && !flush_armed_ && writer_->has_pending()) {
        set_tick_timer(kFlushAfterUs, 0);
        flush_armed_ = true;
      }
      int status = 0;
      forget_registers();
      pid_t tid;
      if (!released_stops_.empty()) {
        std::tie(tid, status) = released_stops_.front();
        released_stops_.pop_front();
      } else if ((tid = waitpid(-1, &status, __WALL)) < 0) {
        if (errno == EINTR) continue;
        break;
      } else {
        ++ptrace_stops_;
        settle_step(tid, status);
      }
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
      if (root_ended_ && !opts_.wait_all && !rest_killed_ && !tasks_.empty()) kill_the_rest();
    }
  } catch (const Error&) {
    set_tick_timer(0, 0);
    kill_all_tasks();
    while (waitpid(-1, nullptr, __WALL) > 0) {
    }
    writer_->flush();
    throw;
  }

  set_tick_timer(0, 0);
  TraceSummary summary;
  summary.root_status = root_status_;
  for (pid_t p : process_order_) summary.processes.push_back(processes_[p]);
  writer_->finish(summary);
  RecordResult r;
  r.trace_dir = setup.dir;
  r.exit_code = exit_code_for_status(root_status_);
  r.events = writer_->last_event();
  r.preemptions = preemptions_;
  r.put_off_preemptions = put_off_preemptions_;
  r.held_writes = held_writes_;
  r.joined_turns = joined_turns_;
  r.put_off_signals = put_off_signals_;
  r.branch_steps = branch_steps_;
  r.point_steps = point_steps_;
  r.moved_points = moved_points_;
  r.held_expiries = held_expiries_;
  r.ptrace_stops = ptrace_stops_;
  r.buffered_syscalls = buffered_syscalls_;
  r.aborted_calls = aborted_calls_;
  r.peak_memory = peak_resident_bytes(getpid());  // not the memory of what exec'd rewind
  return r;
}

size_t RecordSession::kill_all_tasks() {
  std::set<pid_t> processes;
  for (auto& [tid, t] : tasks_) {
    processes.insert(t.pid);
    kill(tid, SIGKILL);  // each end is recorded as its stop comes, as a kill from outside
  }
  forget_registers();
  return processes.size();
}

void RecordSession::kill_the_rest() {
  rest_killed_ = true;
  const size_t processes = kill_all_tasks();
  std::fprintf(stderr,
               "rewind: the program ended; %zu process%s it left running %s killed "
               "(rewind record --wait waits for them)\n",
               processes, processes == 1 ? "" : "es", processes == 1 ? "was" : "were");
}

void RecordSession::end_on_request() {
  rest_killed_ = true;
  kill_all_tasks();
  std::fprintf(stderr,
               "rewind: a second SIGTERM or SIGHUP: the program is killed and the recording "
               "ends (the trace keeps what ran until now)\n");
}

void RecordSession::handle_stop(RecordTask& t, int status) {
  if (WIFSTOPPED(status) && hold_during_group_exit(t, status)) return;
  t.stop_follows_exit = std::exchange(t.resumed_from_exit, false);
  t.stop_follows_signal_event = std::exchange(t.resumed_from_signal_event, false);
  if (WIFEXITED(status) || WIFSIGNALED(status)) return on_exit(t, status);
  if (!WIFSTOPPED(status)) return;
  int sig = WSTOPSIG(status), event = status >> 16;
  if (sig == (SIGTRAP | 0x80)) {
    int kind = syscall_stop_kind_by_result(t.tid);
    if (kind == PTRACE_SYSCALL_INFO_ENTRY) return on_syscall_entry(t);
    if (kind == PTRACE_SYSCALL_INFO_EXIT) return on_syscall_exit(t);
    return resume_syscall(t);
  }
  switch (event) {
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE:
      return on_fork_event(t, event);
    case PTRACE_EVENT_EXEC: {
      RecordTask& x = take_exec_event(t);
      x.exec_seen = true;
      return resume_syscall(x);
    }
    case PTRACE_EVENT_STOP:
      return on_event_stop(t, sig);
    case PTRACE_EVENT_SECCOMP:
      if (uint64_t data = get_event_msg(t.tid); data != kRecorderSeccompData)
        return on_program_seccomp_trace(t, uint32_t(data));
      // The filter's report of a syscall's entry; one already stopped at (the first execve,
      // seen by spawn_traced's PTRACE_SYSCALL) goes on to its exit.
      if (t.state == RunState::InSyscall) return resume_syscall(t);
      return on_syscall_entry(t);
    default:
      return on_signal(t, sig);
  }
}

void RecordSession::run_user(RecordTask& t, int sig) {
  t.state = RunState::UserRunning;
  start_slice(t);
  resume_syscall(t, sig);
}

void RecordSession::release_vfork_parent(pid_t child) {
  for (auto& [ptid, p] : tasks_)
    if (p.vfork_child == child) {
      p.vfork_child = 0;
      // Its PTRACE_EVENT_VFORK_DONE stop, if asked for, follows the vfork event's stop when
      // that one is resumed (resume_tracee), or comes now.
      if (std::exchange(p.vfork_event_pending, false) && p.tracer > 0)
        stop_for_tracer(p, SIGTRAP, TracerStop::NewTask, PTRACE_EVENT_VFORK);
      else if (!vfork_done_stop(p, child))
        resume_syscall(p);
    }
}

void RecordSession::on_event_stop(RecordTask& t, int sig) {
  AddressSpace& g = space(t);
  if (t.fresh) {  // a new task's first stop: it waits for its turn to run
    t.fresh = false;
    t.state = RunState::Stopped;
    t.unrun_since_event = true;  // where replay creates its copy
    if (std::exchange(t.stop_at_start, false) && t.tracer > 0 && t.tracer_seized) {
      // Attached to its creator's tracer, it stops for it before it runs (ptrace(2),
      // PTRACE_O_TRACEFORK): where replay creates its copy.
      t.tracer_stop_at_event = true;
      return stop_for_tracer(t, SIGTRAP, TracerStop::Interrupt, PTRACE_EVENT_STOP);
    }
    g.turns->ready.push_back(t.tid);
    return schedule(g);
  }
  if (t.listening) return on_listen_end(t, sig);
  if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
    return on_group_stop(t, sig);
  if (interrupt_stop_in_user_code(t)) return;  // its tracer's PTRACE_INTERRUPT
  if (t.interrupt_requested) {
    t.interrupt_requested = false;
    if (g.turns->active == t.tid && g.turns->others_wait()) {
      // Waiting in a buffered call that no desched counter watched: made traced, it lets
      // the others run (its wait is seen then).
      if (abort_waiting_call(t)) return resume_syscall(t);
      return preempt(t);
    }
  }
  resume_syscall(t);  // an interrupt with nobody else to run, or SIGCONT's (ptrace(2))
}

RecordTask& RecordSession::take_exec_event(RecordTask& t) {
  auto former = pid_t(get_event_msg(t.tid));
  if (former == t.tid) return t;
  auto it = tasks_.find(former);
  if (it == tasks_.end()) return t;  // not one of ours: cannot happen with __WALL
  // The main thread's record goes (the kernel released it without a report); the caller's
  // record, renamed, takes its place.
  RecordTask moved = std::move(it->second);
  tasks_.erase(it);
  pid_t pid = t.pid;
  moved.exec_former_tid = former;
  moved.tid = pid;
  // Its tracer knows it by its new tid from now on (its former one still names it in the
  // exec's event stop: exec_stops_for_tracer).
  moved.exec_former_seen =
      std::exchange(moved.tid_for_tracer, moved.tracer > 0 ? pid_seen_by(moved.tracer, pid) : 0);
  ThreadGroup& g = groups_[pid];
  AddressSpace& s = *g.space;
  leave_turns(g, pid);
  if (s.turns->active == former) s.turns->active = pid;
  std::replace(g.members.begin(), g.members.end(), former, pid);
  std::replace(s.tasks.begin(), s.tasks.end(), former, pid);
  std::replace(s.turns->ready.begin(), s.turns->ready.end(), former, pid);
  RecordTask& now = tasks_[pid];
  now = std::move(moved);
  return now;
}

void RecordSession::end_other_threads(RecordTask& t) {
  ThreadGroup& g = group(t);
  std::vector<std::pair<pid_t, int>> ended = std::move(g.exec_casualties);
  g.exec_casualties.clear();
  for (pid_t m : g.members)
    if (m != t.tid) ended.emplace_back(m, wait_for_end(m));
  std::sort(ended.begin(), ended.end());
  for (auto [tid, status] : ended) {
    Event e;
    e.kind = EventKind::Exit;
    e.tid = tid;
    e.status = status;
    write(e);
    release_vfork_parent(tid);
    tasks_.erase(tid);
  }
  AddressSpace& s = *g.space;
  for (auto [tid, status] : ended) {
    std::erase(s.tasks, tid);
    std::erase(s.turns->ready, tid);
    if (s.turns->active == tid) s.turns->active = 0;
  }
  std::erase(s.turns->ready, t.tid);
  g.members = {t.tid};
  update_timer();
}

bool RecordSession::exec_in_progress(const RecordTask& t) {
  for (pid_t m : group(t).members) {
    const RecordTask& x = tasks_.at(m);
    if (m != t.tid && x.state == RunState::InSyscall && syscall_has(long(x.entry.orig_rax), kExec))
      return true;
  }
  return false;
}

void RecordSession::on_exit(RecordTask& t, int status) {
  if (groups_.count(t.pid) && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
      exec_in_progress(t)) {
    // Ended by another thread's execve (the kernel reports such ends as exit(0)): its Exit
    // event follows the exec's, where replay's kernel ends it too.
    forget_tracer(t.tid);
    ThreadGroup& g = group(t);
    g.exec_casualties.emplace_back(t.tid, status);
    leave_turns(g, t.tid);
    tasks_.erase(t.tid);
    return;
  }
  Event e;
  e.kind = EventKind::Exit;
  e.tid = t.tid;
  e.status = status;
  write(e);
  if (auto it = processes_.find(t.pid); it != processes_.end() && t.tid == t.pid) {
    it->second.ended = true;
    it->second.status = status;
  }
  if (t.tid == root_) {
    root_status_ = status;
    root_ended_ = true;
  }
  release_vfork_parent(t.tid);
  release_output(t.tid);
  release_written_space(t);
  report_exit_to_tracer(t, status);
  forget_tracer(t.tid);
  if (!groups_.count(t.pid)) {  // a main thread that ended first: its threads are all gone
    tasks_.erase(t.tid);
    return update_timer();
  }
  ThreadGroup& g = group(t);
  std::shared_ptr<AddressSpace> s = g.space;  // may outlive the process (CLONE_VM)
  bool was_active = leave_turns(g, t.tid);
  pid_t pid = t.pid;
  tasks_.erase(t.tid);
  if (g.members.empty()) groups_.erase(pid);
  if (was_active) schedule(*s);
  update_timer();
}

RecordResult record(const RecordOptions& opts) {
  RecordSession r(opts);
  return r.run();
}

}  // namespace rwd
