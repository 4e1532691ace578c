#include "ptrace_ops.h"

#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "engine/errors.h"
#include "engine/os/insn_patch.h"
#include "engine/os/step_flags.h"

namespace rwd {

namespace {
/// The calling thread's copy of one stopped task's registers (RegisterCacheScope).
struct RegisterCache {
  int scopes = 0;
  bool valid = false;
  pid_t tid = 0;
  Registers regs{};
};
thread_local RegisterCache cache;

/// Whether an environment variable is set to something other than "" or "0".
bool env_on(const char* name) {
  const char* v = getenv(name);
  return v && *v && *v != '0';
}

/// REWIND_NO_PTRACE_SHORTCUTS=1: every register read and syscall stop's kind asks the kernel
/// (to measure what the shortcuts save: bench/traced_events).
bool shortcuts_off() {
  static const bool off = env_on("REWIND_NO_PTRACE_SHORTCUTS");
  return off;
}

void keep(pid_t tid, const Registers& r) {
  if (!cache.scopes || shortcuts_off()) return;
  cache.valid = true;
  cache.tid = tid;
  cache.regs = r;
}

/// REWIND_CHECK_REGISTER_CACHE=1: every answer from the copy is compared with the kernel's,
/// and a difference throws (for tests of the cache itself).
bool check_cache() {
  static const bool on = env_on("REWIND_CHECK_REGISTER_CACHE");
  return on;
}

bool cached(pid_t tid, Registers& out) {
  if (!cache.valid || cache.tid != tid) return false;
  out = cache.regs;
  if (check_cache()) {
    Registers real;
    if (ptrace(PTRACE_GETREGS, tid, nullptr, &real) != 0) {
      forget_registers();
      return false;
    }
    for (size_t i = 0; i < kRegisterCount; ++i)
      if (register_value(real, i) != register_value(out, i))
        throw Error("register cache of task " + std::to_string(tid) + " is stale: register " +
                    std::to_string(i) + " is " + hex(register_value(real, i)) + ", the copy " +
                    hex(register_value(out, i)));
  }
  return true;
}

/// eflags bits PTRACE_SETREGS takes from the caller (FLAG_MASK in arch/x86/kernel/ptrace.c
/// set_flags: CF PF AF ZF SF TF DF OF RF AC); the kernel keeps its own IF, IOPL, NT, ID....
constexpr uint64_t kSettableFlags =
    0x1 | 0x4 | 0x10 | 0x40 | 0x80 | 0x100 | 0x400 | 0x800 | 0x10000 | 0x40000;

/// After a successful PTRACE_SETREGS of `r`: what a read would give, when the copy held this
/// task's registers read at this stop and `r` keeps its segments (a selector or base written
/// may read back otherwise: x86_fsbase_read_task); else the copy is dropped.
void keep_written(pid_t tid, const Registers& r) {
  if (!cache.valid || cache.tid != tid) return;
  const Registers& was = cache.regs;
  if (r.cs != was.cs || r.ss != was.ss || r.ds != was.ds || r.es != was.es || r.fs != was.fs ||
      r.gs != was.gs || r.fs_base != was.fs_base || r.gs_base != was.gs_base) {
    cache.valid = false;
    return;
  }
  Registers now = r;
  now.eflags = (was.eflags & ~kSettableFlags) | (r.eflags & kSettableFlags);
  cache.regs = now;
}
}  // namespace

RegisterCacheScope::RegisterCacheScope() {
  ++cache.scopes;
}

RegisterCacheScope::~RegisterCacheScope() {
  if (--cache.scopes == 0) cache.valid = false;
}

void forget_registers() {
  cache.valid = false;
}

Registers get_regs(pid_t tid) {
  Registers r;
  if (cached(tid, r)) return r;
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &r) != 0) {
    forget_registers();
    throw_errno("ptrace(GETREGS, " + std::to_string(tid) + ")");
  }
  keep(tid, r);
  return r;
}

bool try_get_regs(pid_t tid, Registers& out) {
  if (cached(tid, out)) return true;
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &out) == 0) {
    keep(tid, out);
    return true;
  }
  forget_registers();
  if (errno == ESRCH) return false;
  throw_errno("ptrace(GETREGS, " + std::to_string(tid) + ")");
}

void set_regs(pid_t tid, const Registers& r) {
  if (ptrace(PTRACE_SETREGS, tid, nullptr, &r) != 0) {
    forget_registers();
    throw_errno("ptrace(SETREGS, " + std::to_string(tid) + ")");
  }
  keep_written(tid, r);
}

bool try_set_regs(pid_t tid, const Registers& r) {
  if (ptrace(PTRACE_SETREGS, tid, nullptr, &r) == 0) {
    keep_written(tid, r);
    return true;
  }
  forget_registers();
  if (errno == ESRCH) return false;
  throw_errno("ptrace(SETREGS, " + std::to_string(tid) + ")");
}

std::array<uint8_t, 128> get_siginfo(pid_t tid) {
  std::array<uint8_t, 128> si{};
  if (ptrace(PTRACE_GETSIGINFO, tid, nullptr, si.data()) != 0)
    throw_errno("ptrace(GETSIGINFO, " + std::to_string(tid) + ")");
  return si;
}

void set_siginfo(pid_t tid, const std::array<uint8_t, 128>& si) {
  if (ptrace(PTRACE_SETSIGINFO, tid, nullptr, si.data()) != 0)
    throw_errno("ptrace(SETSIGINFO, " + std::to_string(tid) + ")");
}

bool try_get_sigmask(pid_t tid, uint64_t& out) {
  if (ptrace(PTRACE_GETSIGMASK, tid, reinterpret_cast<void*>(sizeof out), &out) == 0) return true;
  if (errno == ESRCH) return false;
  throw_errno("ptrace(GETSIGMASK, " + std::to_string(tid) + ")");
}

bool try_set_sigmask(pid_t tid, uint64_t mask) {
  if (ptrace(PTRACE_SETSIGMASK, tid, reinterpret_cast<void*>(sizeof mask), &mask) == 0) return true;
  if (errno == ESRCH) return false;
  throw_errno("ptrace(SETSIGMASK, " + std::to_string(tid) + ")");
}

unsigned long get_event_msg(pid_t tid) {
  unsigned long msg = 0;
  if (ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &msg) != 0)
    throw_errno("ptrace(GETEVENTMSG, " + std::to_string(tid) + ")");
  return msg;
}

int syscall_stop_kind(pid_t tid) {
  struct __ptrace_syscall_info info;
  std::memset(&info, 0, sizeof info);
  if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof info, &info) <= 0)
    throw_errno("ptrace(GET_SYSCALL_INFO, " + std::to_string(tid) + ")");
  return info.op;
}

bool register_cache_checked() {
  return check_cache();
}

int syscall_stop_kind_after(pid_t tid, int request) {
  if ((request == PTRACE_SYSEMU || request == PTRACE_SYSEMU_SINGLESTEP) && !shortcuts_off()) {
    if (check_cache() && syscall_stop_kind(tid) != PTRACE_SYSCALL_INFO_ENTRY)
      throw Error("task " + std::to_string(tid) + " stopped at a syscall exit after PTRACE_SYSEMU");
    return PTRACE_SYSCALL_INFO_ENTRY;
  }
  return syscall_stop_kind_by_result(tid);
}

int syscall_stop_kind_by_result(pid_t tid) {
  constexpr uint64_t kEnosys = uint64_t(-ENOSYS);
  if (shortcuts_off() || get_regs(tid).rax == kEnosys) return syscall_stop_kind(tid);
  if (check_cache() && syscall_stop_kind(tid) != PTRACE_SYSCALL_INFO_EXIT)
    throw Error("task " + std::to_string(tid) + " stopped at a syscall entry with rax " +
                hex(get_regs(tid).rax));
  return PTRACE_SYSCALL_INFO_EXIT;
}

int wait_task(pid_t tid) {
  forget_registers();
  int status = 0;
  while (waitpid(tid, &status, __WALL) < 0)
    if (errno != EINTR) throw_errno("waitpid(" + std::to_string(tid) + ")");
  settle_step(tid, status);
  return status;
}

int wait_for_end(pid_t tid) {
  forget_registers();
  int status = 0;
  while (waitpid(tid, &status, __WALL) == tid && WIFSTOPPED(status))
    ptrace(PTRACE_CONT, tid, nullptr, nullptr);
  return status;
}

namespace {
std::atomic<uint64_t> resumes{0};
}  // namespace

uint64_t resumes_so_far() {
  return resumes.load(std::memory_order_relaxed);
}

bool resume(pid_t tid, int request, int sig) {
  note_resume(tid, request);  // (before the copy of its registers is dropped)
  forget_registers();
  resumes.fetch_add(1, std::memory_order_relaxed);
  if (ptrace(__ptrace_request(request), tid, nullptr, reinterpret_cast<void*>(long(sig))) == 0)
    return true;
  if (errno == ESRCH) return false;
  throw_errno("ptrace(resume " + std::to_string(request) + ", " + std::to_string(tid) + ")");
}

pid_t spawn_traced(const char* path, char* const argv[], char* const envp[], void (*child_setup)(),
                   bool (*after_seize)()) {
  // Where the CPU runs rdtsc for the program even so (a PVM guest), the mode would catch
  // nothing, and each switch to and from the task would still rewrite CR4.TSD: on such a
  // guest a write of CR4 is an exit to the hypervisor, about 7.5 µs a ptrace stop measured
  // (bench/ptrace_floor, "faulting"). rewind replaces the rdtscs there (insn_patch.h).
  const bool trap_tsc = cpu_traps_rdtsc();
  pid_t pid = fork();
  if (pid < 0) throw_errno("fork");
  if (pid == 0) {
    personality(ADDR_NO_RANDOMIZE);
    if (trap_tsc) prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
    if (child_setup) child_setup();
    kill(getpid(), SIGSTOP);
    if (after_seize && !after_seize()) _exit(126);
    execve(path, argv, envp);
    _exit(127);  // unreachable when traced: the recorder checks the execve result
  }
  int st = 0;
  if (waitpid(pid, &st, WSTOPPED) != pid || !WIFSTOPPED(st)) throw_errno("waitpid(child)");
  if (ptrace(PTRACE_SEIZE, pid, nullptr, reinterpret_cast<void*>(kTraceOptions)) != 0) {
    int e = errno;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    throw SystemError("ptrace(SEIZE) (is ptrace allowed here? see /proc/sys/kernel/yama)", e);
  }
  kill(pid, SIGCONT);
  // Run the child's own code (the end of kill(), then execve) until the execve entry.
  for (;;) {
    if (!resume(pid, PTRACE_SYSCALL)) throw Error("child vanished before exec");
    if (waitpid(pid, &st, __WALL) != pid) throw_errno("waitpid(child)");
    if (!WIFSTOPPED(st))
      throw Error(WIFEXITED(st) && WEXITSTATUS(st) == 126 && after_seize
                      ? "the kernel refused rewind's seccomp filter (try --no-syscall-buffer)"
                      : "child exited before exec");
    if (WSTOPSIG(st) == (SIGTRAP | 0x80) && syscall_stop_kind(pid) == PTRACE_SYSCALL_INFO_ENTRY &&
        get_regs(pid).orig_rax == 59)
      return pid;
    // Our own SIGSTOP/SIGCONT stops and the syscalls of kill() are not part of the recording.
  }
}

}  // namespace rwd
