// Watched pages kept read-only across runs (watched_pages.h).
#include "engine/replay/watched_pages.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/soft_debug_registers.h"
#include "engine/replay/remote_syscall.h"

namespace rwd {

namespace {

constexpr uint64_t kPage = 4096;

/// A process, held by a pidfd (pidfd_open(2)) where the kernel has them, else by its start
/// time: whether the process that has a pid now is still the one it was made for. A pidfd
/// makes that one syscall (a guard asks at every run), where the start time is a read of
/// /proc/PID/stat.
class ProcessHandle {
 public:
  ProcessHandle() = default;
  explicit ProcessHandle(pid_t pid)
      : fd_(int(syscall(SYS_pidfd_open, pid, 0))), started_(fd_ < 0 ? proc_start_time(pid) : 0) {}
  ProcessHandle(ProcessHandle&& o) noexcept : fd_(std::exchange(o.fd_, -1)), started_(o.started_) {}
  ProcessHandle& operator=(ProcessHandle&& o) noexcept {
    if (this != &o) {
      if (fd_ >= 0) close(fd_);
      fd_ = std::exchange(o.fd_, -1);
      started_ = o.started_;
    }
    return *this;
  }
  ~ProcessHandle() {
    if (fd_ >= 0) close(fd_);
  }
  /// Whether process `pid` is the one held. A pidfd's process that still holds its pid
  /// (running, or a zombie not yet reaped) takes signal 0 (pidfd_send_signal(2)); once
  /// reaped it answers ESRCH, and another process may have the pid.
  bool is(pid_t pid) const {
    if (fd_ >= 0) return syscall(SYS_pidfd_send_signal, fd_, 0, nullptr, 0) == 0;
    return started_ != 0 && started_ == proc_start_time(pid);
  }

 private:
  int fd_ = -1;
  uint64_t started_ = 0;
};

/// One process's watched pages.
struct Guard {
  std::map<uint64_t, int> pages;       ///< made read-only when `on`: page -> its own PROT_* bits
  std::set<uint64_t> not_writable;     ///< watched pages found not writable (left alone)
  std::vector<SoftWatchRange> ranges;  ///< the slots' ranges the pages were found for
  std::set<pid_t> tids;                ///< tasks that ran with it (a CLONE_VM child's parent)
  uint64_t insn = 0;                   ///< a `syscall` instruction in this memory
  bool on = false;
  ProcessHandle process;  ///< the process the guard was made for: gone, another has its pid
  /// The mappings that hold `pages`, as they were before: what read_proc_maps reports.
  std::vector<ProcMapping> originals;
};

std::mutex mu;
std::map<pid_t, Guard> guards;  // by real pid; each used by the one replay thread of its pid
std::atomic<size_t> guard_count{0};
thread_local bool toggling = false;  // the mprotect's own runs release nothing

bool same_ranges(const std::vector<SoftWatchRange>& a, const std::vector<SoftWatchRange>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].addr != b[i].addr || a[i].len != b[i].len) return false;
  return true;
}

Guard* find(pid_t pid) {
  std::lock_guard<std::mutex> lock(mu);
  auto it = guards.find(pid);
  return it == guards.end() ? nullptr : &it->second;
}

void erase(pid_t pid) {
  clear_mappings_as_before(pid);
  std::lock_guard<std::mutex> lock(mu);
  guards.erase(pid);
  guard_count = guards.size();
}

/// Process `pid`'s guard, unless that process is gone (another one may have its pid now:
/// its record is dropped, and nothing is done to the pages).
Guard* live(pid_t pid) {
  Guard* g = find(pid);
  if (g && !g->process.is(pid)) {
    erase(pid);
    return nullptr;
  }
  return g;
}

/// Drops the guards of processes that are gone: a replay's processes are killed with it (a
/// new timeline, a checkpoint's copy no longer needed) without a run seeing them end, and
/// each guard holds a descriptor.
void erase_gone() {
  std::vector<pid_t> gone;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [pid, g] : guards)
      if (!g.process.is(pid)) gone.push_back(pid);
  }
  for (pid_t pid : gone) erase(pid);
}

/// Has read_proc_maps report guard `g`'s mappings as they were.
void report_as_before(pid_t pid, const Guard& g) {
  set_mappings_as_before(pid, std::vector<pid_t>(g.tids.begin(), g.tids.end()), g.originals);
}

/// Runs mprotect in task `t` (at syscall instruction `insn` of its memory) for each page:
/// read-only, or its own protection. The task's registers are kept. False when one failed.
bool protect(ReplayTask& t, uint64_t insn, const std::map<uint64_t, int>& pages, bool read_only) {
  if (pages.empty()) return true;
  Registers keep;
  if (!insn || !try_get_regs(t.tid, keep)) return false;
  struct Toggling {
    Toggling() { toggling = true; }
    ~Toggling() { toggling = false; }
  } flag;
  // The mprotects' resumes must not deliver the program's pending signal (a recorded fatal
  // SIGABRT about to be delivered: "did not enter mprotect ... signal 6") or restart its
  // interrupted syscall: those belong to the program's next resume.
  ProgramResumeKept pending(t);
  RemoteSyscall rs(t, insn, keep);
  bool ok = true;
  for (const auto& [page, prot] : pages) {
    int p = read_only ? (prot & ~PROT_WRITE) : prot;
    ok &= rs.call(SYS_mprotect, {page, kPage, uint64_t(p)}) == 0;
  }
  set_regs(t.tid, keep);
  return ok;
}

/// Gives guard `g`'s pages their own protection back through task `t` (sharing its memory).
void release(ReplayTask& t, Guard& g) {
  if (g.on) protect(t, g.insn ? g.insn : t.syscall_insn, g.pages, false);
  g.on = false;
}

}  // namespace

PageGuard guard_watched_pages(ReplayTask& t) {
  std::vector<SoftWatchRange> ranges = soft_write_ranges(t.tid);
  if (t.vm_parent) release_watched_pages(t);  // the parent's, in the memory this child shares
  Guard* g = live(t.pid);
  if (!g) {
    erase_gone();
    ProcessHandle process(t.pid);
    std::lock_guard<std::mutex> lock(mu);
    g = &guards[t.pid];
    g->process = std::move(process);
    guard_count = guards.size();
  }
  if (!same_ranges(g->ranges, ranges)) {
    release(t, *g);
    ProcessHandle process = std::move(g->process);
    *g = Guard{};
    g->process = std::move(process);
    g->ranges = ranges;
    clear_mappings_as_before(t.pid);
  }
  // What read_proc_maps must report as before changes with a new task or new pages.
  bool report = g->tids.insert(t.tid).second;
  if (t.syscall_insn) g->insn = t.syscall_insn;
  // The pages not seen yet: writable ones are guarded, the others left alone. (Their
  // protection changes only by a syscall run for real, which releases the guard first.)
  std::vector<uint64_t> unseen;
  for (const SoftWatchRange& w : ranges)
    for (uint64_t p = w.addr & ~(kPage - 1); p < w.addr + uint64_t(w.len); p += kPage)
      if (!g->pages.count(p) && !g->not_writable.count(p)) unseen.push_back(p);
  if (!unseen.empty()) {
    std::vector<ProcMapping> maps = read_proc_maps(t.tid);
    std::map<uint64_t, int> fresh;
    for (uint64_t p : unseen) {
      const ProcMapping* in = nullptr;
      for (const ProcMapping& m : maps)
        if (p >= m.start && p < m.end) in = &m;
      if (in && in->write) {
        fresh[p] = in->prot();
        bool known = false;
        for (const ProcMapping& o : g->originals) known |= o.start == in->start;
        if (!known) g->originals.push_back(*in);
      } else {
        g->not_writable.insert(p);
      }
    }
    report |= !fresh.empty();
    if (report) report_as_before(t.pid, *g);  // (before the mprotect makes them read-only)
    report = false;
    if (g->on && !protect(t, g->insn, fresh, true)) {
      protect(t, g->insn, fresh, false);
      release(t, *g);
      return PageGuard::Failed;
    }
    g->pages.insert(fresh.begin(), fresh.end());
  }
  if (g->pages.empty()) return PageGuard::NothingWritable;
  if (report) report_as_before(t.pid, *g);
  if (!g->on) {
    g->on = protect(t, g->insn, g->pages, true);
    if (!g->on) protect(t, g->insn, g->pages, false);  // (those that did change)
  }
  return g->on ? PageGuard::Guarded : PageGuard::Failed;
}

bool in_watched_page(const ReplayTask& t, uint64_t addr) {
  const Guard* g = find(t.pid);
  return g && g->on && g->pages.count(addr & ~(kPage - 1)) != 0;
}

bool set_watched_pages_writable(ReplayTask& t, bool writable) {
  Guard* g = find(t.pid);
  if (!g || g->on == !writable) return true;
  bool ok = protect(t, g->insn, g->pages, !writable);
  g->on = !writable && ok;
  if (!ok && !writable) protect(t, g->insn, g->pages, false);
  return ok;
}

void release_watched_pages(ReplayTask& t) {
  if (toggling || guard_count.load() == 0) return;
  std::vector<pid_t> owners;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [pid, g] : guards)
      if (pid == t.pid || (t.vm_parent && g.tids.count(t.vm_parent))) owners.push_back(pid);
  }
  for (pid_t pid : owners) {
    if (Guard* g = live(pid)) release(t, *g);
    erase(pid);
  }
}

void watched_pages_task_ended(const ReplayTask& t) {
  if (guard_count.load() == 0) return;
  if (t.tid == t.pid) return erase(t.pid);
  if (Guard* g = find(t.pid)) g->tids.erase(t.tid);
}

}  // namespace rwd
