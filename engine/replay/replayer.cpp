#include "replayer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>

#include "engine/arch/clone_args.h"
#include "engine/arch/emulated_insns.h"
#include "engine/arch/signal_names.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/cpu_affinity.h"
#include "engine/os/insn_patch.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/replay/buffer_fill.h"
#include "engine/replay/exec_restore.h"
#include "engine/replay/output_echo.h"
#include "engine/replay/reach_point.h"
#include "engine/replay/recorded_memory.h"
#include "engine/replay/remote_syscall.h"
#include "engine/replay/replay_session_impl.h"
#include "engine/replay/replay_task.h"
#include "engine/trace/buffered_records.h"
#include "engine/trace/trace_reader.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

// Signal state the first program inherited when recorded (set before fork, read in the child).
uint64_t g_sig_ignored = 0, g_sig_blocked = 0;

void prepare_child() {
  // Replay must not write files: a crash that dumped core while recording must not do so now.
  rlimit rl{0, 0};
  setrlimit(RLIMIT_CORE, &rl);
  for (int sig = 1; sig <= 64; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP)
      signal(sig, (g_sig_ignored >> (sig - 1)) & 1 ? SIG_IGN : SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  for (int sig = 1; sig <= 64; ++sig)
    if ((g_sig_blocked >> (sig - 1)) & 1) sigaddset(&set, sig);
  sigprocmask(SIG_SETMASK, &set, nullptr);
}

}  // namespace

Replayer::Impl(const ReplayOptions& o) : opts_(o), trace_(o.trace_dir) {
  if (trace_.meta().ticks != "none")
    throw TraceError(trace_.dir() + ": recorded with '" + trace_.meta().ticks +
                     "' ticks; this rewind replays counter-less ('none') traces only");
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  pin_to_current_cpu();  // before the first tracee is spawned: they inherit it
  trace_events_ = getenv("REWIND_DEBUG_EVENTS") != nullptr;
}

Replayer::~Impl() {
  kill_all();
}

std::string Replayer::where(const Event& e) const {
  std::string s = "event " + std::to_string(e.number) + " (task " + std::to_string(e.tid);
  if (e.kind == EventKind::Syscall) s += ", " + syscall_name(e.syscallno());
  return s + ")";
}

ReplayTask& Replayer::task_for(const Event& e) {
  auto it = tasks_.find(e.tid);
  if (it != tasks_.end()) return it->second;
  if (!root_started_ && e.kind == EventKind::Exec) {
    // The first event is the first program's exec: start it from the saved executable.
    const TraceMeta& m = trace_.meta();
    std::string exe = trace_.file_path(m.exe_file);
    std::vector<char*> argv, envp;
    for (auto& a : m.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& v : m.env) envp.push_back(const_cast<char*>(v.c_str()));
    envp.push_back(nullptr);
    ReplayTask t;
    t.rec_tid = e.tid;
    g_sig_ignored = m.sig_ignored;
    g_sig_blocked = m.sig_blocked;
    t.tid = spawn_traced(exe.c_str(), argv.data(), envp.data(), prepare_child);
    t.pid = t.tid;
    t.at_first_exec = true;
    root_started_ = true;
    return tasks_[e.tid] = t;
  }
  throw TraceError(trace_.dir() + "/events: " + where(e) + " names a task that does not exist");
}

void Replayer::finish_fork(ReplayTask& t) {
  // The parent is inside its real fork; run it to the syscall exit and give it the recorded
  // child pid.
  Stop s = run_to_stop(t, PTRACE_SYSCALL);
  if (s.kind != Stop::SyscallExit)
    throw DivergenceError("replay diverged: task " + std::to_string(t.rec_tid) +
                          " did not return from fork");
  Registers r = get_regs(t.tid);
  r.rax = uint64_t(t.fork_result);
  set_regs(t.tid, r);
  t.state = TaskState::Running;
}

void Replayer::begin_event() {
  cur_ = std::make_unique<InProgress>();
  cur_->e = std::move(*next_);
  next_.reset();
  const Event& e = cur_->e;
  ReplayTask& t = task_for(e);
  cur_->rec_tid = e.tid;
  if (trace_events_)
    fprintf(stderr, "rewind: replaying %s (real tid %d)\n", where(e).c_str(), t.tid);
  // A task inside a real fork first returns from it, whatever its next event, except when it
  // was killed from outside (SIGKILL ends it where it stands).
  bool killed = e.kind == EventKind::Exit && WIFSIGNALED(e.status) && WTERMSIG(e.status) == SIGKILL;
  if (t.state == TaskState::ForkPending && !killed) finish_fork(t);
  if (pause_request_ && pause_request_->event == e.number &&
      (pause_request_->rec_tid != e.tid || buffered_bytes_used(e.buffered) < pause_request_->pos ||
       !(t.buffer_features & RWD_FEATURE_PAUSE)))
    throw Error(where(e) + " has no buffered record ending at byte " +
                std::to_string(pause_request_->pos) + " of task " +
                std::to_string(pause_request_->rec_tid) + " to pause at");
  if (!e.buffered.empty()) fill_buffer(t, e);
  switch (e.kind) {
    case EventKind::Exec:
      if (t.at_first_exec) break;  // spawn_traced left it at its execve: on_exec runs it
      [[fallthrough]];             // a later exec: reached at its syscall's entry
    case EventKind::Syscall:
    case EventKind::SyscallEntry:
      if (t.at_entry) {
        t.at_entry = false;  // a SyscallEntry event already brought it there
      } else {
        if (t.state == TaskState::Exited)
          throw diverged(e, "the task already exited with status " + std::to_string(t.exit_status));
        cur_->goal = Goal::SyscallEntry;
      }
      break;
    case EventKind::Signal:
      cur_->goal = e.synchronous ? Goal::Signal : Goal::Point;
      break;
    case EventKind::Rdtsc:
    case EventKind::Cpuid:
      cur_->goal = Goal::Emulated;
      break;
    case EventKind::Exit:
      if (t.status_pending) {  // a main thread that ended first: its threads have ended now
        int status = 0;
        forget_registers();
        while (waitpid(t.tid, &status, __WALL) < 0 && errno == EINTR) {
        }
        t.exit_status = status;
        t.status_pending = false;
      } else if (t.state != TaskState::Exited) {
        if (killed) {
          kill(t.tid, SIGKILL);  // killed from outside while recorded
          forget_registers();
          wait_stop(t, PTRACE_SYSEMU);
        } else {
          // Ended by a signal that ends its whole process: delivered now, and every thread
          // of it collected (their Exit events find them ended), unless it came already.
          if (WIFSIGNALED(e.status)) deliver_fatal_signal(t, WTERMSIG(e.status));
          if (t.state != TaskState::Exited) cur_->goal = Goal::Exit;
        }
      }
      break;
    case EventKind::Sched:
      cur_->goal = Goal::Point;
      break;
    case EventKind::End:
      break;
  }
  if (cur_->goal == Goal::Point) {
    cur_->search = std::make_unique<PointSearch>(t, e);
    if (cur_->search->found()) on_goal_stop(Stop{});
  } else if (cur_->goal == Goal::None) {
    apply(Stop{});
  }
}

std::string Replayer::stop_text(const ReplayTask& t, const Stop& s) {
  switch (s.kind) {
    case Stop::Signal:
      return signal_name(s.sig);
    case Stop::SyscallEntry:
    case Stop::SyscallExit:
      return "syscall " + syscall_name(long(get_regs(t.tid).orig_rax));
    case Stop::Event:
      return "ptrace event " + std::to_string(s.sig);
    case Stop::Exited:
      return "the task's end";
    case Stop::BufferPause:
      return "a pause between its buffered syscalls";
    case Stop::Interrupted:
      return "an interrupt";
  }
  return "a stop";
}

void Replayer::on_goal_stop(const Stop& s) {
  const Event& e = cur_->e;
  ReplayTask& t = cur_task();
  switch (cur_->goal) {
    case Goal::None:
      break;
    case Goal::SyscallEntry:
      if (s.kind == Stop::SyscallEntry) {
        Registers r = get_regs(t.tid);
        if (r.orig_rax == RWD_SYS_DIVERGED && made_by_library(t, r))
          throw diverged(e, "the program made syscall " + syscall_name(long(r.rdi)) +
                                " where the recording buffered " + syscall_name(long(r.rsi)));
        buffer_reached(t, e);
        break;
      }
      if (s.kind == Stop::Exited)
        throw diverged(
            e, "expected a syscall, but the task exited (status " + std::to_string(s.status) + ")");
      throw diverged(e, "expected a syscall, but the task got " + stop_text(t, s) + " at rip " +
                            hex(get_regs(t.tid).rip));
    case Goal::Point: {
      if (!cur_->search->found()) cur_->search->on_stop(s);
      if (!cur_->search->found()) return;  // on towards the point
      count_point(*cur_->search->found());
      cur_->search.reset();
      if (e.kind == EventKind::Sched) {
        buffer_reached(t, e);
        break;
      }
      // The signal's arrival stop is a stop at the point too (a timeline compares it with a
      // point that a step reached before the search did): the buffer's position stays as
      // the point has it until the delivery.
      cur_->buffer_at_delivery = true;
      // A signal sent from outside: at its point, send it again and let it arrive. If the
      // task blocks it now, it arrived inside a call that unblocked it for a while
      // (rt_sigsuspend, ppoll, pselect6, epoll_pwait with a mask: signal(7)), which replay
      // emulates and so never changed the mask: unblocked for its delivery. The handler's
      // recorded frame (on_signal) holds the mask that its rt_sigreturn puts back.
      uint64_t mask = 0;
      uint64_t bit = 1ull << (e.signo - 1);
      if (try_get_sigmask(t.tid, mask) && (mask & bit)) try_set_sigmask(t.tid, mask & ~bit);
      t.blocked.reset();
      syscall(SYS_tgkill, t.pid, t.tid, e.signo);
      t.signal_injected = true;
      cur_->goal = Goal::Signal;
      return;
    }
    case Goal::Signal:
      if (s.kind != Stop::Signal || s.sig != e.signo)
        throw diverged(e, "expected " + signal_name(e.signo) + ", got " + stop_text(t, s));
      break;
    case Goal::Emulated: {
      const char* what = e.kind == EventKind::Cpuid ? "cpuid" : "rdtsc";
      if (s.kind != Stop::Signal || s.sig != SIGSEGV)
        throw diverged(e, std::string("expected ") + what + ", got " + stop_text(t, s));
      auto code = read_memory(t.tid, get_regs(t.tid).rip, 3);
      auto insn = decode_emulated(code.data(), code.size());
      // An int3 there is a debugger's breakpoint over the instruction's first byte (the
      // timeline put it back after stepping over it): the instruction cannot be told.
      bool hidden = code[0] == 0xcc;
      if (!hidden && (!insn || (insn->op == EmulatedOp::Cpuid) != (e.kind == EventKind::Cpuid))) {
        char bytes[16];
        snprintf(bytes, sizeof bytes, "%02x %02x %02x", code[0], code[1], code[2]);
        throw diverged(e, std::string("expected ") + what + ", got a fault at " +
                              hex(get_regs(t.tid).rip) + " (" + bytes + ")");
      }
      break;
    }
    case Goal::Exit:
      if (s.kind != Stop::Exited)
        throw diverged(e, "the task should have ended, but it got " + stop_text(t, s));
      break;
  }
  apply(s);
}

void Replayer::apply(const Stop& s) {
  const Event& e = cur_->e;
  ReplayTask& t = cur_task();
  switch (e.kind) {
    case EventKind::Syscall:
      on_syscall(t, e);
      // New code gets its cpuid replaced, and its rdtsc where the CPU here does not trap it
      // (insn_patch.h), as the recorder did after the same syscall.
      if (syscall_has(e.syscallno(), kMapsCode) && (e.regs.rdx & PROT_EXEC) && e.result >= 0) {
        uint64_t at = e.syscallno() == SYS_mmap ? uint64_t(e.result) : e.regs.rdi;
        patch_emulated_insns(t.tid, at, at + e.regs.rsi);
      }
      break;
    case EventKind::SyscallEntry: {
      Registers regs = get_regs(t.tid);
      if (auto d = first_register_difference(e.regs, regs)) throw diverged(e, *d);
      t.at_entry = true;
      break;
    }
    case EventKind::Exec:
      on_exec(t, e);
      break;
    case EventKind::Signal:
      on_signal(t, e, s);
      break;
    case EventKind::Rdtsc:
    case EventKind::Cpuid:
      set_regs(t.tid, e.regs);
      buffer_reached(t, e);
      break;
    case EventKind::Exit: {
      // Killed from outside as it was ending by its own exit or exit_group (its last event):
      // the recording got the SIGKILL's status, replay's copy the exit's, and nothing the
      // program can see differs (its parent's wait is replayed from the trace).
      const bool killed_exiting = WIFSIGNALED(e.status) && WTERMSIG(e.status) == SIGKILL &&
                                  WIFEXITED(t.exit_status) && t.ended_by_exit_call;
      if (t.exit_status != e.status && !killed_exiting)
        throw diverged(e, "task ended with status " + std::to_string(t.exit_status) +
                              ", recorded " + std::to_string(e.status));
      tasks_.erase(e.tid);
      break;
    }
    case EventKind::Sched:
    case EventKind::End:
      break;
  }
  done_ = e.number;
  finished_ = true;
}

ReplayStep Replayer::step_for(ReplayStep::Kind kind) {
  ReplayStep st;
  st.kind = kind;
  st.event = cur_ ? &cur_->e : nullptr;
  if (cur_ && kind != ReplayStep::EventDone) st.task = &cur_task();
  return st;
}

std::optional<ReplayStep> Replayer::answer(const RunCommand& cmd) {
  Await was = std::exchange(await_, Await::Nothing);
  switch (was) {
    case Await::Nothing:
      return std::nullopt;
    case Await::Request: {
      ReplayTask& t = cur_task();
      last_stop_ = run_once(t, cmd.request ? cmd.request : PTRACE_SYSEMU, cmd.interrupt);
      if (last_stop_.kind == Stop::SyscallEntry && at_buffer_pause(t)) {
        last_stop_.kind = Stop::BufferPause;
        last_stop_.status = int(take_buffer_pause(t));
        await_ = Await::PauseAck;
      } else {
        await_ = Await::Claim;
      }
      ReplayStep st = step_for(ReplayStep::Stopped);
      st.stop = last_stop_;
      return st;
    }
    case Await::PauseAck:
      // A pause is the replay's own stop only for a search that runs to it.
      if (cur_task().stop_at_pause) on_goal_stop(last_stop_);
      return std::nullopt;
    case Await::Claim:
      // An interrupt is only ever the driver's: the task goes on towards the goal.
      if (!cmd.claimed && last_stop_.kind != Stop::Interrupted) on_goal_stop(last_stop_);
      return std::nullopt;
    case Await::Patch:
      cur_->search->patch_answer(cmd.patch_allowed);
      return std::nullopt;
  }
  return std::nullopt;
}

ReplayStep Replayer::run(const RunCommand& cmd) {
  try {
    if (auto st = answer(cmd)) return *st;
    for (;;) {
      if (finished_) {
        finished_ = false;
        done_event_ = std::move(cur_->e);
        cur_.reset();
        ReplayStep st;
        st.kind = ReplayStep::EventDone;
        st.event = &done_event_;
        return st;
      }
      if (!cur_) {
        if (!peek()) return step_for(ReplayStep::End);
        begin_event();
        continue;
      }
      // The event's task must run its own code towards the goal.
      if (cur_->search) {
        if (auto patch = cur_->search->patch_request()) {
          await_ = Await::Patch;
          ReplayStep st = step_for(ReplayStep::PatchRequest);
          st.addr = patch->first;
          st.len = patch->second;
          return st;
        }
        cur_->search->before_resume();
      }
      await_ = Await::Request;
      ReplayStep st = step_for(ReplayStep::Resume);
      st.request = PTRACE_SYSEMU;
      return st;
    }
  } catch (...) {
    await_ = Await::Nothing;
    finished_ = false;
    kill_all();
    throw;
  }
}

void Replayer::on_exec(ReplayTask& t, const Event& e) {
  bool initial = t.at_first_exec;
  t.at_first_exec = false;
  Registers regs;
  if (!initial) {
    regs = get_regs(t.tid);
    long nr = long(regs.orig_rax);
    if (nr != SYS_execve && nr != SYS_execveat)
      throw diverged(e, "expected execve, got " + syscall_name(nr));
    // Exec the saved executable instead of the original path; argv and envp are the
    // program's own (the recorded stack replaces whatever the kernel builds from them).
    std::string exe = trace_.file_path(e.file);
    // The path goes where the stack pointer is (always mapped); argv and envp are not needed,
    // as the recorded stack replaces what the kernel builds. A vfork child shares its memory
    // with its parent until the exec: those bytes are put back there afterwards.
    std::vector<uint8_t> saved = read_memory(t.tid, regs.rsp, exe.size() + 1);
    if (saved.size() != exe.size() + 1) throw diverged(e, "no room for the exec path");
    write_memory(t.tid, regs.rsp, exe.c_str(), exe.size() + 1);
    RemoteSyscall rs(t, regs.rip - 2, regs);
    int64_t r = -1;
    if (exec_ends_threads(t)) {
      rs.enter(SYS_execve, {regs.rsp, 0, 0});
      if (end_threads_for_exec(t))
        if (Stop s = run_to_stop(t, PTRACE_SYSCALL); s.kind == Stop::SyscallExit)
          r = int64_t(get_regs(t.tid).rax);
    } else {
      r = rs.call(SYS_execve, {regs.rsp, 0, 0});
      if (rs.last_stop().kind == Stop::Event && rs.last_stop().sig == PTRACE_EVENT_EXEC) {
        Stop s = run_to_stop(t, PTRACE_SYSCALL);
        r = s.kind == Stop::SyscallExit ? int64_t(get_regs(t.tid).rax) : -1;
      }
    }
    if (r != 0) write_memory(t.tid, regs.rsp, saved.data(), saved.size());
    if (pid_t sharer = memory_sharer(t)) write_memory(sharer, regs.rsp, saved.data(), saved.size());
    t.vm_parent = 0;
    t.vm_clone_flags = 0;
    if (r != 0) throw diverged(e, "exec of the saved " + exe + " failed");
  } else {
    // spawn_traced left the first program at its execve entry: run it for real.
    Stop s = run_to_stop(t, PTRACE_SYSCALL);
    if (s.kind == Stop::Event && s.sig == PTRACE_EVENT_EXEC) s = run_to_stop(t, PTRACE_SYSCALL);
    if (s.kind != Stop::SyscallExit || get_regs(t.tid).rax != 0)
      throw diverged(e, "the saved executable did not start");
  }
  restore_exec(t, e, trace_);
  // A child that shared this process's memory (CLONE_VM) keeps the old memory: none of this
  // process's tasks is its parent's memory any more.
  for (auto& [rec, x] : tasks_)
    if (x.vm_parent && &x != &t)
      for (const auto& [prec, p] : tasks_)
        if (p.tid == x.vm_parent && p.pid == t.pid) x.vm_parent = 0, x.vm_clone_flags = 0;
  t.syscall_buffer = 0;  // the new image registers its own
  t.buffer_features = 0;
  t.defer_start = t.defer_end = 0;
  t.kernel = {};  // exec releases the old memory's tid address, robust list and signal stack
  // The last one it ran was in the old image; until the new one runs its own, one in its vDSO.
  t.syscall_insn = find_syscall_insn(t.tid);
}

pid_t Replayer::memory_sharer(const ReplayTask& t) const {
  if (!t.vm_parent) return 0;
  // Its parent, or, if that thread has ended, another living thread of the parent's process.
  pid_t pid = 0;
  for (const auto& [rec, x] : tasks_)
    if (x.tid == t.vm_parent) {
      if (x.state != TaskState::Exited) return x.tid;
      pid = x.pid;
    }
  for (const auto& [rec, x] : tasks_)
    if (pid && x.pid == pid && x.state != TaskState::Exited) return x.tid;
  return 0;  // every task that shared it has ended: the memory is this task's alone
}

bool Replayer::exec_ends_threads(const ReplayTask& t) const {
  for (const auto& [rec, x] : tasks_)
    if (&x != &t && x.pid == t.pid && (x.state != TaskState::Exited || x.status_pending))
      return true;
  return false;
}

bool Replayer::end_threads_for_exec(ReplayTask& t) {
  // The kernel ends the other threads (reported as exit(0), before the exec's stop: fs/exec.c
  // de_thread) and gives the caller the process's pid as its tid; the main thread goes
  // without a report (ptrace(2), "execve(2) under ptrace"). Their Exit events come after the
  // exec's and find them ended, as after an exit_group.
  resume(t.tid, PTRACE_SYSCALL, 0);
  pid_t rec_leader = 0;
  for (auto& [rec, x] : tasks_) {
    if (x.pid != t.pid) continue;
    if (x.tid == x.pid) rec_leader = rec;
    if (&x == &t || x.tid == x.pid || x.state == TaskState::Exited) continue;
    x.state = TaskState::Exited;
    x.exit_status = wait_for_end(x.tid);
  }
  if (t.tid != t.pid && rec_leader) {
    // The caller's record takes the main thread's place, under the main thread's recorded tid
    // (the trace names it so from now on); the node keeps its address (references hold).
    tasks_.erase(rec_leader);
    auto node = tasks_.extract(t.rec_tid);
    node.key() = rec_leader;
    t.exec_former_rec = t.rec_tid;
    t.rec_tid = rec_leader;
    t.tid = t.pid;
    tasks_.insert(std::move(node));
    if (cur_ && cur_->rec_tid == t.exec_former_rec) cur_->rec_tid = rec_leader;
  }
  Stop s = wait_stop(t, PTRACE_SYSCALL);
  return s.kind == Stop::Event && s.sig == PTRACE_EVENT_EXEC;
}

void Replayer::on_signal(ReplayTask& t, const Event& e, const Stop&) {
  Registers now = get_regs(t.tid);
  if (auto d = first_register_difference(e.regs, now))
    throw diverged(e, signal_name(e.signo) + ": " + *d);
  if (e.synchronous || std::exchange(cur_->buffer_at_delivery, false)) buffer_reached(t, e);
  set_siginfo(t.tid, e.siginfo);
  t.resume_sig = e.signo;
  if (e.memory.empty()) return;  // no handler: delivered at the next resume
  // Deliver now, stopping at the handler's first instruction, and put the recorded signal
  // frame in place (its FPU area is not determined by the program; see the recorder).
  Stop h = run_to_stop(t, PTRACE_SINGLESTEP);
  if (h.kind != Stop::Signal || h.sig != SIGTRAP)
    throw diverged(e, "the handler of " + signal_name(e.signo) + " did not start");
  write_recorded(t.tid, e.memory);
}

void Replayer::kill_all() {
  cur_.reset();  // a trampoline goes out of the code while its task is still there
  std::vector<pid_t> threads, leaders;
  for (auto& [rec, t] : tasks_) {
    if (t.state == TaskState::Exited) continue;
    kill(t.tid, SIGKILL);
    (t.tid == t.pid ? leaders : threads).push_back(t.tid);
  }
  forget_registers();
  tasks_.clear();
  // Reap them: a thread-group leader is reported only after its other threads, so threads
  // first. Checkpoints (other children, alive and stopped) must not be waited for here.
  for (auto* list : {&threads, &leaders})
    for (pid_t tid : *list)
      while (waitpid(tid, nullptr, __WALL) < 0 && errno == EINTR) {
      }
  // Tasks that ended or were orphaned to us along the way (as subreaper) and are zombies now.
  for (;;) {
    pid_t r = waitpid(-1, nullptr, __WALL | WNOHANG);
    if (r > 0 || (r < 0 && errno == EINTR)) continue;
    break;
  }
}

ReplayResult ReplaySession::Impl::result() const {
  ReplayResult result;
  result.events = trace_.last_event();
  result.interrupted = trace_.interrupted();
  result.points = points_;
  result.point_stops = point_stops_;
  result.points_jump = points_jump_;
  result.points_int3 = points_int3_;
  result.points_breakpoint = points_breakpoint_;
  result.point_full_digests = point_full_digests_;
  if (trace_.summary()) result.exit_code = exit_code_for_status(trace_.summary()->root_status);
  return result;
}

ReplaySession::ReplaySession(const ReplayOptions& opts) : impl_(std::make_unique<Impl>(opts)) {}
ReplaySession::ReplaySession(const ReplayOptions& opts, const Checkpoint& c)
    : impl_(std::make_unique<Impl>(opts, c)) {}
ReplaySession::~ReplaySession() = default;
ReplayStep ReplaySession::run(const RunCommand& cmd) {
  return impl_->run(cmd);
}
bool ReplaySession::step() {
  for (;;) {
    ReplayStep s = impl_->run(RunCommand{});
    if (s.kind == ReplayStep::End) return false;
    if (s.kind == ReplayStep::EventDone) return true;
  }
}
bool ReplaySession::code_patched() const {
  return impl_->code_patched();
}
bool ReplaySession::point_search_waits_at(pid_t rec_tid, uint64_t rip) const {
  return impl_->point_search_waits_at(rec_tid, rip);
}
bool ReplaySession::patching_code(pid_t pid) const {
  for (const auto& [rec, t] : impl_->tasks_)
    if (t.pid == pid && t.patching_libc) return true;
  return false;
}
const Event* ReplaySession::next_event() {
  return impl_->peek();
}
uint64_t ReplaySession::events_done() const {
  return impl_->done_;
}
const std::map<pid_t, ReplayTask>& ReplaySession::tasks() const {
  return impl_->tasks_;
}
const TraceReader& ReplaySession::trace() const {
  return impl_->trace_;
}
ReplayResult ReplaySession::result() const {
  return impl_->result();
}
void ReplaySession::pause_in_buffer(pid_t rec_tid, uint64_t event, uint32_t pos) {
  if (pos == 0)
    impl_->pause_request_.reset();
  else
    impl_->pause_request_ = Impl::PauseRequest{rec_tid, event, pos};
}
bool ReplaySession::can_pause_buffer(pid_t rec_tid) const {
  auto it = impl_->tasks_.find(rec_tid);
  return it != impl_->tasks_.end() && (it->second.buffer_features & RWD_FEATURE_PAUSE);
}

ReplayResult replay_to_end(const ReplayOptions& opts) {
  RegisterCacheScope registers;  // this thread runs its tracees one at a time
  ReplaySession session(opts);
  while (session.step()) {
  }
  return session.result();
}

}  // namespace rwd
