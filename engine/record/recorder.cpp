#include "recorder.h"

#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <climits>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/record/exec_capture.h"
#include "engine/record/file_saver.h"
#include "engine/record/signal_disposition.h"
#include "engine/record/syscall_capture.h"
#include "engine/trace/trace_dir.h"
#include "engine/trace/trace_files.h"
#include "engine/trace/trace_writer.h"

extern char** environ;

namespace rwd {

namespace {

/// Recorder-side state of one task.
struct Task {
  pid_t tid = 0;
  pid_t pid = 0;  ///< thread group (process) id
  bool in_syscall = false;
  Registers entry{};  ///< registers at the current syscall's entry
  EntrySnapshot snap;
  bool exec_seen = false;      ///< PTRACE_EVENT_EXEC arrived during this syscall
  bool fork_recorded = false;  ///< the fork-like syscall's event was written at its event stop
  bool skip_syscall = false;   ///< entry was cancelled (rseq): exit reports -ENOSYS
  pid_t vfork_child = 0;       ///< held until this vfork child execs or exits
  bool held = false;
};

volatile sig_atomic_t g_forward_to = 0;

void forward_signal(int sig) {
  if (g_forward_to > 0) kill(g_forward_to, sig);
}

volatile sig_atomic_t g_flush_due = 0;
void on_flush_timer(int) {
  g_flush_due = 1;
}  // also interrupts the blocking waitpid

/// While the tracees run without producing events, pending events must still reach the disk
/// soon (crash safety): a one-shot timer interrupts the blocking waitpid.
constexpr long kIdleFlushUs = 50'000;

void arm_flush_timer() {
  itimerval it{};
  it.it_value.tv_usec = kIdleFlushUs;
  setitimer(ITIMER_REAL, &it, nullptr);
}

bool is_fork_like(long nr) {
  return nr == SYS_fork || nr == SYS_vfork || nr == SYS_clone || nr == SYS_clone3;
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

class Recorder {
 public:
  explicit Recorder(const RecordOptions& o) : opts_(o) {}
  RecordResult run();

 private:
  void handle_stop(Task& t, int status);
  void on_syscall_entry(Task& t);
  void on_syscall_exit(Task& t);
  void on_fork_event(Task& t, int event);
  void on_signal(Task& t, int sig);
  void on_exit(Task& t, int status);
  void resume_task(Task& t, int sig = 0);
  bool emulate_rdtsc(Task& t, Registers& regs);
  OutputStream output_target(pid_t tid, uint64_t fd);
  void write(Event& e) { writer_->write(e); }

  RecordOptions opts_;
  std::unique_ptr<TraceWriter> writer_;
  std::unique_ptr<FileSaver> saver_;
  std::map<pid_t, Task> tasks_;
  std::map<pid_t, int> early_stops_;  ///< stops of new children seen before their fork event
  std::map<pid_t, ProcessInfo> processes_;
  std::vector<pid_t> process_order_;
  pid_t root_ = 0;
  int root_status_ = 0;
  struct stat stdout_st_ {
  }, stderr_st_{};
  bool have_stdout_ = false, have_stderr_ = false;
};

void Recorder::resume_task(Task& t, int sig) {
  resume(t.tid, PTRACE_SYSCALL, sig);
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

RecordResult Recorder::run() {
  std::string path = find_program(opts_.argv[0]);
  if (path.empty()) throw Error("cannot find program '" + opts_.argv[0] + "'");
  std::string dir;
  std::string root_dir;
  if (!opts_.output_dir.empty()) {
    dir = opts_.output_dir;
    if (::mkdir(dir.c_str(), 0755) != 0) throw SystemError("create trace directory " + dir, errno);
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
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd)) meta.cwd = cwd;
  meta.start_time = int64_t(time(nullptr));
  meta.ticks = "none";
  meta.exe_file = saver_->save(path, path);
  have_stdout_ = fstat(1, &stdout_st_) == 0;
  have_stderr_ = fstat(2, &stderr_st_) == 0;

  std::vector<char*> argv;
  for (auto& a : opts_.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  root_ = spawn_traced(path.c_str(), argv.data(), environ, nullptr);
  // Inherited signal state is part of the program's input: replay starts it the same way.
  SignalMasks masks = signal_masks(root_);
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
  processes_[root_] = ProcessInfo{root_, 0, false, 0, opts_.argv};
  process_order_.push_back(root_);
  on_syscall_entry(root);  // spawn_traced left it at the entry of its execve

  struct sigaction sa {};
  sa.sa_handler = on_flush_timer;  // no SA_RESTART: the timer interrupts waitpid
  sigaction(SIGALRM, &sa, nullptr);
  bool timer_armed = false;
  try {
    while (!tasks_.empty()) {
      if (g_flush_due) {
        g_flush_due = 0;
        timer_armed = false;
        writer_->flush();
      }
      if (!timer_armed && writer_->has_pending()) {
        arm_flush_timer();
        timer_armed = true;
      }
      int status = 0;
      pid_t tid = waitpid(-1, &status, __WALL);
      if (tid < 0) {
        if (errno == EINTR) continue;
        break;
      }
      auto it = tasks_.find(tid);
      if (it == tasks_.end()) {
        early_stops_[tid] = status;
        continue;
      }
      handle_stop(it->second, status);
    }
  } catch (const Error&) {
    for (auto& [tid, t] : tasks_) kill(tid, SIGKILL);
    while (waitpid(-1, nullptr, __WALL) > 0) {
    }
    writer_->flush();
    throw;
  }

  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  TraceSummary summary;
  summary.root_status = root_status_;
  for (pid_t p : process_order_) summary.processes.push_back(processes_[p]);
  writer_->finish(summary);
  RecordResult r;
  r.trace_dir = dir;
  r.exit_code = exit_code_for_status(root_status_);
  r.events = writer_->last_event();
  return r;
}

void Recorder::handle_stop(Task& t, int status) {
  if (WIFEXITED(status) || WIFSIGNALED(status)) return on_exit(t, status);
  if (!WIFSTOPPED(status)) return;
  int sig = WSTOPSIG(status), event = status >> 16;
  if (sig == (SIGTRAP | 0x80)) {
    int kind = syscall_stop_kind(t.tid);
    if (kind == PTRACE_SYSCALL_INFO_ENTRY) return on_syscall_entry(t);
    if (kind == PTRACE_SYSCALL_INFO_EXIT) return on_syscall_exit(t);
    return resume_task(t);
  }
  switch (event) {
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE:
      return on_fork_event(t, event);
    case PTRACE_EVENT_EXEC:
      t.exec_seen = true;
      return resume_task(t);
    case PTRACE_EVENT_STOP:  // a new child's first stop, or a group-stop
      return resume_task(t);
    default:
      return on_signal(t, sig);
  }
}

void Recorder::on_syscall_entry(Task& t) {
  t.entry = get_regs(t.tid);
  t.in_syscall = true;
  t.exec_seen = t.fork_recorded = t.skip_syscall = false;
  long nr = long(t.entry.orig_rax);
  const SyscallSpec* spec = syscall_spec(nr);
  if (!spec)
    throw UnsupportedError("syscall " + std::to_string(nr) + " (" + syscall_name(nr) +
                           ") is not supported yet");
  if (nr == SYS_clone || nr == SYS_clone3) {
    uint64_t flags = t.entry.rdi;
    if (nr == SYS_clone3) read_memory_exact(t.tid, t.entry.rdi, &flags, 8);
    if (flags & (CLONE_THREAD | CLONE_SIGHAND))
      throw UnsupportedError(
          "the program creates threads (clone with CLONE_THREAD); multi-threaded recording is "
          "not supported yet");
    if ((flags & CLONE_VM) && !(flags & CLONE_VFORK))
      throw UnsupportedError(
          "the program creates a process sharing its memory (clone with CLONE_VM); this is not "
          "supported yet");
  }
  if (nr == SYS_rseq) {
    // Restartable sequences let the kernel write the CPU number into memory at any time;
    // report them unavailable, as rr does, and glibc falls back to plain syscalls.
    Registers r = t.entry;
    r.orig_rax = uint64_t(-1);
    set_regs(t.tid, r);
    t.skip_syscall = true;
  }
  t.snap = snapshot_entry(t.tid, *spec, t.entry);
  if (nr == SYS_exit || nr == SYS_exit_group) {
    Event e;  // no exit stop follows; the Exit event comes with the task's end
    e.kind = EventKind::Syscall;
    e.tid = t.tid;
    e.regs = t.entry;
    write(e);
  }
  resume_task(t);
}

void Recorder::on_syscall_exit(Task& t) {
  Registers regs = get_regs(t.tid);
  long nr = long(t.entry.orig_rax);
  int64_t result = int64_t(regs.rax);
  t.in_syscall = false;
  if (t.skip_syscall) {
    regs.rax = uint64_t(-ENOSYS);
    result = -ENOSYS;
    set_regs(t.tid, regs);
  }
  if ((nr == SYS_execve || nr == SYS_execveat) && t.exec_seen && result == 0) {
    Event e = capture_exec(t.tid, *saver_);
    write(e);
    processes_[t.pid].argv = e.argv;
    if (pid_t parent = 0; true) {
      for (auto& [ptid, p] : tasks_)
        if (p.vfork_child == t.tid) parent = ptid;
      if (parent) {
        Task& p = tasks_[parent];
        p.vfork_child = 0;
        p.held = false;
        resume_task(p);
      }
    }
    return resume_task(t);
  }
  if (is_fork_like(nr) && t.fork_recorded) return resume_task(t);
  const SyscallSpec* spec = syscall_spec(nr);
  Event e;
  e.kind = EventKind::Syscall;
  e.tid = t.tid;
  e.regs = t.entry;
  e.result = result;
  e.memory = capture_outputs(t.tid, *spec, t.entry, result, t.snap);
  if (spec->output != OutputKind::None && result > 0) e.output = output_target(t.tid, t.entry.rdi);
  if (nr == SYS_mmap && result >= 0 && !(t.entry.r10 & MAP_ANONYMOUS)) {
    std::string fd = "/proc/" + std::to_string(t.tid) + "/fd/" + std::to_string(int(t.entry.r8));
    char target[PATH_MAX] = {};
    ssize_t n = ::readlink(fd.c_str(), target, sizeof target - 1);
    e.file = saver_->save(fd, n > 0 ? std::string(target, size_t(n)) : fd);
  }
  write(e);
  resume_task(t);
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
  c.tid = c.pid = child;
  processes_[child] = ProcessInfo{child, t.pid, false, 0, processes_[t.pid].argv};
  process_order_.push_back(child);
  if (event == PTRACE_EVENT_VFORK) {
    // The parent cannot run before the child execs or exits; holding it here keeps the
    // child's events before the parent's in the trace, as replay needs.
    t.vfork_child = child;
    t.held = true;
  } else {
    resume_task(t);
  }
  if (auto it = early_stops_.find(child); it != early_stops_.end()) {
    int st = it->second;
    early_stops_.erase(it);
    handle_stop(c, st);
  }
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
  Event e;
  e.kind = EventKind::Rdtsc;
  e.tid = t.tid;
  e.regs = regs;
  write(e);
  return true;
}

void Recorder::on_signal(Task& t, int sig) {
  auto si = get_siginfo(t.tid);
  Registers regs = get_regs(t.tid);
  int code;
  std::memcpy(&code, si.data() + 8, 4);  // siginfo_t.si_code
  if (sig == SIGSEGV && code == SI_KERNEL && emulate_rdtsc(t, regs)) return resume_task(t);
  bool sync = code > 0 &&
              (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGTRAP);
  if (!sync && signal_is_ignored(t.tid, sig)) {
    // No handler and the default action is to ignore: delivering it changes nothing (an
    // interrupted syscall restarts either way), so it is not part of the recording.
    return resume_task(t, 0);
  }
  Event e;
  e.kind = EventKind::Signal;
  e.tid = t.tid;
  e.regs = regs;
  e.signo = sig;
  e.synchronous = sync;
  e.siginfo = si;
  write(e);
  resume_task(t, sig);
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
  for (auto& [ptid, p] : tasks_)
    if (p.vfork_child == t.tid) {
      p.vfork_child = 0;
      p.held = false;
      resume_task(p);
    }
  tasks_.erase(t.tid);
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
