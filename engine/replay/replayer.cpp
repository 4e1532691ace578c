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
#include "engine/arch/signal_names.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/cpu_affinity.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/replay/buffer_fill.h"
#include "engine/replay/exec_restore.h"
#include "engine/replay/output_echo.h"
#include "engine/replay/reach_point.h"
#include "engine/replay/remote_syscall.h"
#include "engine/replay/replay_session.h"
#include "engine/replay/replay_task.h"
#include "engine/trace/buffered_records.h"
#include "engine/trace/trace_reader.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

constexpr uint64_t kPage = 4096;

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

/// After rewind ran a syscall inside the task (possibly with changed arguments), puts back the
/// task's own registers as they were at the syscall entry, with `result` in rax. The segment
/// bases stay as the kernel left them: arch_prctl(ARCH_SET_FS) changes fs_base.
void finish_syscall(pid_t tid, const Registers& entry, int64_t result) {
  Registers now = get_regs(tid);
  Registers r = entry;
  r.fs_base = now.fs_base;
  r.gs_base = now.gs_base;
  r.fs = now.fs;
  r.gs = now.gs;
  r.rax = uint64_t(result);
  set_regs(tid, r);
}

}  // namespace

class ReplaySession::Impl {
 public:
  explicit Impl(const ReplayOptions& o) : opts_(o), trace_(o.trace_dir) {
    if (trace_.meta().ticks != "none")
      throw TraceError(trace_.dir() + ": recorded with '" + trace_.meta().ticks +
                       "' ticks; this rewind replays counter-less ('none') traces only");
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    pin_to_current_cpu();  // before the first tracee is spawned: they inherit it
    trace_events_ = getenv("REWIND_DEBUG_EVENTS") != nullptr;
  }
  /// Resumes the replay of `c`: a fresh fork of its process continues from its event.
  Impl(const ReplayOptions& o, const ReplaySession::Checkpoint& c);
  ~Impl() { kill_all(); }
  ReplaySession::CheckpointPtr checkpoint(bool need_position);
  const Event* peek() {
    if (!next_ && !at_end_) {
      next_ = trace_.next();
      at_end_ = !next_;
    }
    return next_ ? &*next_ : nullptr;
  }
  bool step();
  ReplayResult result() const;

  ReplayOptions opts_;
  TraceReader trace_;
  std::map<pid_t, ReplayTask> tasks_;  ///< by recorded tid
  uint64_t done_ = 0;
  /// ReplaySession::pause_in_buffer's request.
  struct PauseRequest {
    pid_t rec_tid = 0;
    uint64_t event = 0;
    uint32_t pos = 0;
  };
  std::optional<PauseRequest> pause_request_;

 private:
  ReplayTask& task_for(const Event& e);
  std::string where(const Event& e) const;
  /// The error for a replay that no longer matches the recording at event `e`.
  DivergenceError diverged(const Event& e, const std::string& what) const {
    return DivergenceError("replay diverged at " + where(e) + ": " + what);
  }
  void reach_syscall(ReplayTask& t, const Event& e);
  /// Runs t to its next syscall entry (PTRACE_SYSEMU); throws DivergenceError otherwise.
  void reach_syscall_entry(ReplayTask& t, const Event& e);
  /// Syscall buffering (preload/README.md): the task's buffer is at `addr`; its library
  /// takes results from the records from now on.
  void register_buffer(ReplayTask& t, uint64_t addr, uint64_t features);
  /// Puts e's buffered records in t's buffer, before t runs to e.
  void fill_buffer(ReplayTask& t, const Event& e);
  /// At e's point: the records are used up; the buffer starts again, as when recording.
  void buffer_reached(ReplayTask& t, const Event& e);
  void finish_fork(ReplayTask& t);
  void on_syscall(ReplayTask& t, const Event& e);
  void on_exec(ReplayTask& t, const Event& e);
  void on_signal(ReplayTask& t, const Event& e);
  void on_rdtsc(ReplayTask& t, const Event& e);
  void on_exit(ReplayTask& t, const Event& e);
  void on_syscall_entry(ReplayTask& t, const Event& e);
  void on_sched(ReplayTask& t, const Event& e);
  void fix_child_tids(ReplayTask& parent, ReplayTask& child, const Event& e, const CloneArgs& args);
  void emulate(ReplayTask& t, const Event& e, Registers regs);
  int64_t execute(ReplayTask& t, const Event& e, const Registers& regs);
  void execute_checked(ReplayTask& t, const Event& e, const Registers& regs);
  void replay_mmap(ReplayTask& t, const Event& e, const Registers& regs);
  void replay_mremap(ReplayTask& t, const Event& e, const Registers& regs);
  void replay_fork(ReplayTask& t, const Event& e, const Registers& regs);
  void replay_exit(ReplayTask& t, const Event& e, const Registers& regs);
  void kill_all();

  bool root_started_ = false;
  bool trace_events_ = false;
  std::optional<Event> next_;
  bool at_end_ = false;
  uint64_t points_ = 0, point_stops_ = 0, points_jump_ = 0, points_int3_ = 0,
           points_breakpoint_ = 0;
  /// Adds one found point to the statistics.
  void count_point(const PointSearch& p) {
    ++points_;
    point_stops_ += p.stops;
    points_jump_ += p.method == PointMethod::Jump;
    points_int3_ += p.method == PointMethod::Int3;
    points_breakpoint_ += p.method == PointMethod::Breakpoint;
  }
};

using Replayer = ReplaySession::Impl;

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

void Replayer::reach_syscall(ReplayTask& t, const Event& e) {
  if (t.at_entry) {  // a SyscallEntry event already brought it there
    t.at_entry = false;
    return;
  }
  reach_syscall_entry(t, e);
  buffer_reached(t, e);
}

void Replayer::reach_syscall_entry(ReplayTask& t, const Event& e) {
  if (t.state == TaskState::Exited)
    throw diverged(e, "the task already exited with status " + std::to_string(t.exit_status));
  Stop s = run_to_stop(t, PTRACE_SYSEMU);
  if (s.kind == Stop::SyscallEntry) {
    Registers r = get_regs(t.tid);
    if (r.orig_rax == RWD_SYS_DIVERGED)
      throw diverged(e, "the program made syscall " + syscall_name(long(r.rdi)) +
                            " where the recording buffered " + syscall_name(long(r.rsi)));
    return;
  }
  if (s.kind == Stop::Exited)
    throw diverged(
        e, "expected a syscall, but the task exited (status " + std::to_string(s.status) + ")");
  Registers r = get_regs(t.tid);
  throw diverged(e, "expected a syscall, but the task got " +
                        (s.kind == Stop::Signal ? signal_name(s.sig) : "a ptrace event") +
                        " at rip " + hex(r.rip));
}

void Replayer::register_buffer(ReplayTask& t, uint64_t addr, uint64_t features) {
  t.syscall_buffer = addr;
  t.buffer_features = features;
  uint32_t replaying = 1;
  write_memory(t.tid, addr + RWD_CONTROL_OFFSET, &replaying, sizeof replaying);
}

void Replayer::fill_buffer(ReplayTask& t, const Event& e) {
  if (!t.syscall_buffer)
    throw diverged(e, "the recording has buffered syscalls, but the task registered no buffer");
  // The library leaves room for the end mark after its records (preload/hook.c has_room).
  if (e.buffered.size() + RWD_RECORD_HEADER > RWD_BUFFER_SIZE - RWD_DATA_OFFSET)
    throw TraceError(trace_.dir() + "/events: " + where(e) + ": buffered records too large");
  uint32_t used = buffered_bytes_used(e.buffered);  // well-formed, or a TraceError
  std::vector<uint32_t> pauses;
  if (t.buffer_features & RWD_FEATURE_PAUSE) {
    // A point between events lies after all of its event's records: pausing after the last
    // one lets reach_point look for it from there only. (An abort mark is never used up:
    // the call it stands for is made again traced.)
    bool point = e.kind == EventKind::Sched || (e.kind == EventKind::Signal && !e.synchronous);
    if (point && used > 0) pauses.push_back(used);
    if (pause_request_ && pause_request_->event == e.number && pause_request_->rec_tid == e.tid)
      pauses.push_back(pause_request_->pos);
  }
  try {
    rwd::fill_buffer(t, e.buffered, std::move(pauses));
  } catch (const DivergenceError& x) {
    throw diverged(e, x.what());
  }
}

void Replayer::buffer_reached(ReplayTask& t, const Event& e) {
  if (e.buffered.empty() || !t.syscall_buffer) return;
  if (!t.pauses.empty())
    throw diverged(e, "the task did not pause at byte " + std::to_string(t.pauses.front()) +
                          " of its buffered syscall records");
  t.records.clear();
  uint32_t pos = 0;
  read_memory_exact(t.tid, t.syscall_buffer, &pos, sizeof pos);
  uint32_t used = buffered_bytes_used(e.buffered);
  if (pos != used)
    throw diverged(e, "the task used " + std::to_string(pos) +
                          " bytes of buffered syscall "
                          "records, the recording " +
                          std::to_string(used));
  pos = 0;
  write_memory(t.tid, t.syscall_buffer, &pos, sizeof pos);
}

void Replayer::emulate(ReplayTask& t, const Event& e, Registers regs) {
  for (const auto& m : e.memory) write_memory(t.tid, m.addr, m.bytes.data(), m.bytes.size());
  if ((opts_.echo_output || opts_.on_output) && e.output != OutputStream::None && e.result > 0) {
    const SyscallSpec* spec = syscall_spec(e.syscallno());
    if (spec && opts_.echo_output) echo_output(t.tid, spec->output, regs, e.result, e.output);
    if (spec && opts_.on_output)
      opts_.on_output(e.number, e.output, output_bytes(t.tid, spec->output, regs, e.result));
  }
  regs.rax = uint64_t(e.result);
  set_regs(t.tid, regs);
  t.restart_pending = e.result >= -516 && e.result <= -512;
}

int64_t Replayer::execute(ReplayTask& t, const Event&, const Registers& regs) {
  RemoteSyscall rs(t, regs.rip - 2, regs);
  int64_t r =
      rs.call(long(regs.orig_rax), {regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9});
  finish_syscall(t.tid, regs, r);
  return r;
}

void Replayer::execute_checked(ReplayTask& t, const Event& e, const Registers& regs) {
  int64_t r = execute(t, e, regs);
  if (r != e.result)
    throw diverged(e, "returned " + std::to_string(r) + " in replay, " + std::to_string(e.result) +
                          " when recorded");
}

void Replayer::replay_mmap(ReplayTask& t, const Event& e, const Registers& regs) {
  if (e.result < 0 && e.result > -4096) return emulate(t, e, regs);
  uint64_t target = uint64_t(e.result), len = regs.rsi, prot = regs.rdx, flags = regs.r10;
  flags = (flags & ~uint64_t(MAP_FIXED_NOREPLACE)) | MAP_FIXED;
  RemoteSyscall rs(t, regs.rip - 2, regs);
  int64_t r;
  if (e.file.empty()) {
    // Anonymous memory, or a device such as /dev/zero: anonymous memory at the same place.
    if (!(flags & MAP_ANONYMOUS)) flags = (flags & ~uint64_t(MAP_SHARED_VALIDATE)) | MAP_PRIVATE;
    r = rs.call(SYS_mmap, {target, len, prot, flags | MAP_ANONYMOUS, uint64_t(-1), 0});
  } else {
    // Map the trace's copy. First put anonymous memory there to hold the path for openat.
    std::string path = trace_.file_path(e.file);
    if (path.size() + 1 > kPage)
      throw Error("trace path too long: " + path);  // mmap is page-granular
    r = rs.call(SYS_mmap, {target, len, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, uint64_t(-1), 0});
    if (r != int64_t(target)) throw diverged(e, "cannot map memory at " + hex(target));
    write_memory(t.tid, target, path.c_str(), path.size() + 1);
    int64_t fd = rs.call(SYS_openat, {uint64_t(AT_FDCWD), target, O_RDONLY | O_CLOEXEC});
    if (fd < 0) throw diverged(e, "replayed task cannot open " + path);
    // Shared file mappings become private: replay must never write to the saved file.
    uint64_t fflags = (flags & ~uint64_t(MAP_SHARED_VALIDATE)) | MAP_PRIVATE;
    r = rs.call(SYS_mmap, {target, len, prot, fflags, uint64_t(fd), regs.r9});
    rs.call(SYS_close, {uint64_t(fd)});
  }
  if (r != e.result)
    throw diverged(e, "mmap returned " + hex(uint64_t(r)) + " in replay, " +
                          hex(uint64_t(e.result)) + " when recorded");
  finish_syscall(t.tid, regs, e.result);
}

void Replayer::replay_mremap(ReplayTask& t, const Event& e, const Registers& regs) {
  if (e.result < 0 && e.result > -4096) return emulate(t, e, regs);
  Registers r = regs;
  if (uint64_t(e.result) != regs.rdi) {  // moved: force the recorded destination
    r.r10 |= MREMAP_MAYMOVE | MREMAP_FIXED;
    r.r8 = uint64_t(e.result);
  }
  int64_t got = execute(t, e, r);
  finish_syscall(t.tid, regs, got);
  if (got != e.result)
    throw diverged(e, "mremap returned " + hex(uint64_t(got)) + " in replay, " +
                          hex(uint64_t(e.result)) + " when recorded");
}

void Replayer::replay_fork(ReplayTask& t, const Event& e, const Registers& regs) {
  if (e.child_tid == 0) return emulate(t, e, regs);  // the fork failed when recorded
  RemoteSyscall rs(t, regs.rip - 2, regs);
  rs.call(long(regs.orig_rax), {regs.rdi, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9});
  const Stop& s = rs.last_stop();
  if (s.kind != Stop::Event ||
      (s.sig != PTRACE_EVENT_FORK && s.sig != PTRACE_EVENT_VFORK && s.sig != PTRACE_EVENT_CLONE))
    throw diverged(e, "the replayed " + syscall_name(e.syscallno()) + " created no task");
  CloneArgs args = decode_clone_args(t.tid, regs);
  ReplayTask c;
  c.rec_tid = e.child_tid;
  c.tid = pid_t(get_event_msg(t.tid));
  c.pid = s.sig == PTRACE_EVENT_CLONE && args.thread() ? t.pid : c.tid;
  if (args.shares_memory() && !args.thread()) c.vm_parent = t.tid;
  if (c.pid == c.tid) {  // a copy of, or the same, memory
    c.syscall_buffer = t.syscall_buffer;
    c.buffer_features = t.buffer_features;
  }
  wait_new_task(c);
  fix_child_tids(t, c, e, args);
  tasks_[e.child_tid] = c;
  t.state = TaskState::ForkPending;
  t.fork_result = e.result;
}

void Replayer::fix_child_tids(ReplayTask& parent, ReplayTask& child, const Event& e,
                              const CloneArgs& args) {
  // The kernel wrote the new task's real tid where clone was asked to (CLONE_PARENT_SETTID,
  // CLONE_CHILD_SETTID, clone(2)); the program must see the recorded one, as it did.
  uint32_t tid = uint32_t(e.child_tid);
  if ((args.flags & CLONE_PARENT_SETTID) && args.parent_tid)
    write_memory(parent.tid, args.parent_tid, &tid, 4);
  if ((args.flags & CLONE_CHILD_SETTID) && args.child_tid)
    write_memory(child.tid, args.child_tid, &tid, 4);
}

void Replayer::replay_exit(ReplayTask& t, const Event& e, const Registers& regs) {
  RemoteSyscall rs(t, regs.rip - 2, regs);
  rs.call(long(regs.orig_rax), {regs.rdi});
  if (rs.last_stop().kind != Stop::Exited) throw diverged(e, "the task did not end");
}

void Replayer::on_syscall(ReplayTask& t, const Event& e) {
  reach_syscall(t, e);
  Registers regs = get_regs(t.tid);
  if (auto d = first_register_difference(e.regs, regs)) throw diverged(e, *d);
  t.syscall_insn = regs.rip - 2;
  long nr = e.syscallno();
  if (nr == RWD_SYS_REGISTER_BUFFER) {  // answered by the recorder, not the kernel
    emulate(t, e, regs);
    if (e.result == 0) register_buffer(t, regs.rdi, regs.r8);
    return;
  }
  const SyscallSpec* spec = syscall_spec(nr);
  if (!spec) throw TraceError(trace_.dir() + "/events: " + where(e) + ": unknown syscall");
  switch (spec->replay) {
    case ReplayPolicy::Emulate:
      return emulate(t, e, regs);
    case ReplayPolicy::Execute:
      return execute_checked(t, e, regs);
    case ReplayPolicy::ExecuteSetResult: {
      execute(t, e, regs);
      return finish_syscall(t.tid, regs, e.result);
    }
    case ReplayPolicy::Mmap:
      return replay_mmap(t, e, regs);
    case ReplayPolicy::Mremap:
      return replay_mremap(t, e, regs);
    case ReplayPolicy::Fork:
      return replay_fork(t, e, regs);
    case ReplayPolicy::Exit:
      return replay_exit(t, e, regs);
    case ReplayPolicy::Sigreturn: {
      RemoteSyscall rs(t, regs.rip - 2, regs);
      rs.call(SYS_rt_sigreturn);
      return;
    }
  }
}

void Replayer::on_exec(ReplayTask& t, const Event& e) {
  bool initial = t.at_first_exec;
  t.at_first_exec = false;
  Registers regs;
  if (!initial) {
    reach_syscall(t, e);
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
    int64_t r = rs.call(SYS_execve, {regs.rsp, 0, 0});
    if (rs.last_stop().kind == Stop::Event && rs.last_stop().sig == PTRACE_EVENT_EXEC) {
      Stop s = run_to_stop(t, PTRACE_SYSCALL);
      r = s.kind == Stop::SyscallExit ? int64_t(get_regs(t.tid).rax) : -1;
    }
    if (r != 0) write_memory(t.tid, regs.rsp, saved.data(), saved.size());
    if (t.vm_parent) write_memory(t.vm_parent, regs.rsp, saved.data(), saved.size());
    t.vm_parent = 0;
    if (r != 0) throw diverged(e, "exec of the saved " + exe + " failed");
  } else {
    // spawn_traced left the first program at its execve entry: run it for real.
    Stop s = run_to_stop(t, PTRACE_SYSCALL);
    if (s.kind == Stop::Event && s.sig == PTRACE_EVENT_EXEC) s = run_to_stop(t, PTRACE_SYSCALL);
    if (s.kind != Stop::SyscallExit || get_regs(t.tid).rax != 0)
      throw diverged(e, "the saved executable did not start");
  }
  restore_exec(t, e, trace_);
  t.syscall_buffer = 0;  // the new image registers its own
  t.buffer_features = 0;
}

void Replayer::on_signal(ReplayTask& t, const Event& e) {
  if (!e.synchronous) {
    // Sent from outside: find the recorded point, then send it again and let it arrive.
    count_point(reach_point(t, e));
    buffer_reached(t, e);
    syscall(SYS_tgkill, t.pid, t.tid, e.signo);
    t.signal_injected = true;
  }
  Stop s = run_to_stop(t, PTRACE_SYSEMU);
  if (s.kind != Stop::Signal || s.sig != e.signo)
    throw diverged(e, "expected " + signal_name(e.signo) + ", got " +
                          (s.kind == Stop::Signal ? signal_name(s.sig)
                           : s.kind == Stop::SyscallEntry
                               ? "syscall " + syscall_name(long(get_regs(t.tid).orig_rax))
                               : std::string("the task's end")));
  Registers now = get_regs(t.tid);
  if (auto d = first_register_difference(e.regs, now))
    throw diverged(e, signal_name(e.signo) + ": " + *d);
  if (e.synchronous) buffer_reached(t, e);
  set_siginfo(t.tid, e.siginfo);
  t.resume_sig = e.signo;
  if (e.memory.empty()) return;  // no handler: delivered at the next resume
  // Deliver now, stopping at the handler's first instruction, and put the recorded signal
  // frame in place (its FPU area is not determined by the program; see the recorder).
  Stop h = run_to_stop(t, PTRACE_SINGLESTEP);
  if (h.kind != Stop::Signal || h.sig != SIGTRAP)
    throw diverged(e, "the handler of " + signal_name(e.signo) + " did not start");
  for (const auto& m : e.memory) write_memory(t.tid, m.addr, m.bytes.data(), m.bytes.size());
}

void Replayer::on_syscall_entry(ReplayTask& t, const Event& e) {
  reach_syscall(t, e);
  Registers regs = get_regs(t.tid);
  if (auto d = first_register_difference(e.regs, regs)) throw diverged(e, *d);
  t.at_entry = true;
}

void Replayer::on_sched(ReplayTask& t, const Event& e) {
  count_point(reach_point(t, e));
  buffer_reached(t, e);
}

void Replayer::on_rdtsc(ReplayTask& t, const Event& e) {
  Stop s = run_to_stop(t, PTRACE_SYSEMU);
  if (s.kind != Stop::Signal || s.sig != SIGSEGV) throw diverged(e, "expected rdtsc");
  set_regs(t.tid, e.regs);
  buffer_reached(t, e);
}

void Replayer::on_exit(ReplayTask& t, const Event& e) {
  if (t.state != TaskState::Exited) {
    if (WIFSIGNALED(e.status) && WTERMSIG(e.status) == SIGKILL) {
      kill(t.tid, SIGKILL);  // killed from outside while recorded
      wait_stop(t, PTRACE_SYSEMU);
    } else {
      Stop s = run_to_stop(t, PTRACE_SYSEMU);
      if (s.kind != Stop::Exited) throw diverged(e, "the task should have ended");
    }
  }
  if (t.exit_status != e.status)
    throw diverged(e, "task ended with status " + std::to_string(t.exit_status) + ", recorded " +
                          std::to_string(e.status));
  tasks_.erase(e.tid);
}

void Replayer::kill_all() {
  std::vector<pid_t> threads, leaders;
  for (auto& [rec, t] : tasks_) {
    if (t.state == TaskState::Exited) continue;
    kill(t.tid, SIGKILL);
    (t.tid == t.pid ? leaders : threads).push_back(t.tid);
  }
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

bool ReplaySession::Impl::step() {
  if (!peek()) return false;
  Event ev = std::move(*next_);
  next_.reset();
  const Event* e = &ev;
  try {
    ReplayTask& t = task_for(*e);
    if (trace_events_)
      fprintf(stderr, "rewind: replaying %s (real tid %d)\n", where(*e).c_str(), t.tid);
    // A task inside a real fork first returns from it, whatever its next event, except
    // when it was killed from outside (SIGKILL ends it where it stands).
    bool killed =
        e->kind == EventKind::Exit && WIFSIGNALED(e->status) && WTERMSIG(e->status) == SIGKILL;
    if (t.state == TaskState::ForkPending && !killed) finish_fork(t);
    if (pause_request_ && pause_request_->event == e->number &&
        (pause_request_->rec_tid != e->tid ||
         buffered_bytes_used(e->buffered) < pause_request_->pos ||
         !(t.buffer_features & RWD_FEATURE_PAUSE)))
      throw Error(where(*e) + " has no buffered record ending at byte " +
                  std::to_string(pause_request_->pos) + " of task " +
                  std::to_string(pause_request_->rec_tid) + " to pause at");
    if (!e->buffered.empty()) fill_buffer(t, *e);
    switch (e->kind) {
      case EventKind::Syscall:
        on_syscall(t, *e);
        break;
      case EventKind::Exec:
        on_exec(t, *e);
        break;
      case EventKind::Signal:
        on_signal(t, *e);
        break;
      case EventKind::Rdtsc:
        on_rdtsc(t, *e);
        break;
      case EventKind::Exit:
        on_exit(t, *e);
        break;
      case EventKind::SyscallEntry:
        on_syscall_entry(t, *e);
        break;
      case EventKind::Sched:
        on_sched(t, *e);
        break;
      case EventKind::End:
        break;
    }
  } catch (...) {
    kill_all();
    throw;
  }
  done_ = e->number;
  return true;
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
  if (trace_.summary()) result.exit_code = exit_code_for_status(trace_.summary()->root_status);
  return result;
}

namespace {

/// Makes the stopped task `t` fork itself (a syscall injected at its last `syscall`
/// instruction) and returns the new process, stopped before running any code with `t`'s
/// registers. `t` is left as it was. Throws DivergenceError.
ReplayTask fork_task(ReplayTask& t) {
  if (!t.syscall_insn) throw DivergenceError("task has no syscall instruction to fork with");
  // What the next resume must do (deliver a signal, restart a syscall) belongs to the
  // program's next run, not to the injected fork: set aside, then given to both.
  ReplayTask pending = t;
  t.resume_sig = 0;
  t.restart_pending = t.signal_injected = false;
  Registers saved = get_regs(t.tid);
  RemoteSyscall rs(t, t.syscall_insn, saved);
  rs.call(SYS_fork);
  const Stop& s = rs.last_stop();
  if (s.kind != Stop::Event || s.sig != PTRACE_EVENT_FORK)
    throw DivergenceError("a checkpoint fork did not create a process");
  ReplayTask c = t;
  c.tid = c.pid = pid_t(get_event_msg(t.tid));
  wait_new_task(c);
  Stop exit_stop = run_to_stop(t, PTRACE_SYSCALL);  // the parent returns from fork
  if (exit_stop.kind != Stop::SyscallExit)
    throw DivergenceError("a checkpoint fork did not return in the replayed task");
  set_regs(t.tid, saved);
  set_regs(c.tid, saved);
  for (ReplayTask* x : {&t, &c}) {
    x->resume_sig = pending.resume_sig;
    x->restart_pending = pending.restart_pending;
    x->signal_injected = pending.signal_injected;
  }
  return c;
}

}  // namespace

/// The forked copy of a single-task replay just after event `done`.
struct ReplaySession::Checkpoint {
  uint64_t done = 0;
  std::map<pid_t, ReplayTask> tasks;  ///< one task: the stopped copy
  uint64_t points = 0, point_stops = 0;
  TraceReader::Position position;  ///< the reader just after event `done`
  ~Checkpoint() {
    for (auto& [rec, t] : tasks) {
      if (t.state == TaskState::Exited) continue;  // a record only: no process of its own
      // A stopped tracee dies of SIGKILL at once; reap it (it is this process's child).
      kill(t.tid, SIGKILL);
      while (waitpid(t.tid, nullptr, __WALL) < 0 && errno == EINTR) {
      }
    }
  }
};

void ReplaySession::CheckpointDeleter::operator()(Checkpoint* c) const {
  delete c;
}

ReplaySession::CheckpointPtr ReplaySession::Impl::checkpoint(bool need_position) {
  std::vector<ReplayTask*> live;
  for (auto& [rec, t] : tasks_)
    if (t.state != TaskState::Exited) live.push_back(&t);
  // Fork copies only the calling thread: processes with threads, and process trees, are not
  // checkpointed (the timeline then starts over from the trace's start).
  if (live.size() != 1) return nullptr;
  ReplayTask& t = *live[0];
  if (t.state != TaskState::Running || t.at_entry || t.vm_parent || !t.syscall_insn) return nullptr;
  CheckpointPtr c(new Checkpoint);
  c->done = done_;
  c->points = points_;
  c->point_stops = point_stops_;
  if (next_ && need_position) return nullptr;  // read ahead: the reader is past `done_`
  c->position = trace_.position();
  c->tasks[t.rec_tid] = fork_task(t);
  // Threads that ended before this point but whose Exit event comes after it (their exit
  // syscall is replayed, the event that collects them not yet): kept as records, so that
  // replay from the checkpoint finds them at that event.
  for (auto& [rec, x] : tasks_)
    if (x.state == TaskState::Exited) c->tasks[rec] = x;
  return c;
}

ReplaySession::Impl::Impl(const ReplayOptions& o, const ReplaySession::Checkpoint& c) : Impl(o) {
  for (auto& [rec, ct] : c.tasks) {
    ReplayTask copy = ct;
    tasks_[rec] = ct.state == TaskState::Exited ? copy : fork_task(copy);
  }
  root_started_ = true;
  points_ = c.points;
  point_stops_ = c.point_stops;
  trace_.seek(c.position);
  done_ = c.done;
}

ReplaySession::ReplaySession(const ReplayOptions& opts) : impl_(std::make_unique<Impl>(opts)) {}
ReplaySession::ReplaySession(const ReplayOptions& opts, const Checkpoint& c)
    : impl_(std::make_unique<Impl>(opts, c)) {}
ReplaySession::CheckpointPtr ReplaySession::checkpoint() {
  return impl_->checkpoint(true);
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
    if (t.state != TaskState::Exited) out.push_back(t.tid);
  return out;
}
ReplaySession::~ReplaySession() = default;
bool ReplaySession::step() {
  return impl_->step();
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
  ReplaySession session(opts);
  while (session.step()) {
  }
  return session.result();
}

}  // namespace rwd
