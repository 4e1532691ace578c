// Copies of a replayed process: a fork with every other thread re-created (process_copy.h).
#include "engine/replay/process_copy.h"

#include <elf.h>
#include <sched.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <string>

#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/replay/remote_syscall.h"

namespace rwd {

namespace {

/// The flags a thread of the copy is created with: what pthread_create gives glibc's threads
/// (sysdeps/unix/sysv/linux/createthread.c), less the tid writes and TLS, which the copy's
/// registers and ThreadKernelState set.
constexpr uint64_t kThreadFlags =
    CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;

/// Room for the XSAVE area PTRACE_GETREGSET(NT_X86_XSTATE) returns (bytes): about 2.7 KiB
/// with AVX-512, 11 KiB with AMX tiles.
constexpr size_t kXstateRoom = 64 * 1024;

/// Gives the stopped thread `c` of a copy the kernel state `k` by syscalls injected at `insn`
/// (the caller gives it its registers afterwards). `altstack`: set the alternate signal stack
/// too (a fork child inherits it; a clone with CLONE_VM starts without). Throws
/// DivergenceError.
void give_kernel_state(ReplayTask& c, uint64_t insn, const ThreadKernelState& k, bool altstack) {
  Registers now = get_regs(c.tid);
  RemoteSyscall rs(c, insn, now);
  if (k.clear_child_tid) rs.call(SYS_set_tid_address, {k.clear_child_tid});
  auto check = [&](int64_t r, const char* what) {
    if (r != 0)
      throw DivergenceError(std::string(what) + " of a copied thread failed (" +
                            std::to_string(-r) + ")");
  };
  if (k.robust_list)
    check(rs.call(SYS_set_robust_list, {k.robust_list, k.robust_len}), "set_robust_list");
  if (altstack && k.altstack_size) {
    // The stack_t goes below the thread's red zone (128 bytes); those bytes are put back.
    uint64_t at = (now.rsp - 256 - sizeof(stack_t)) & ~uint64_t(15);
    std::vector<uint8_t> old = read_memory(c.tid, at, sizeof(stack_t));
    stack_t ss{};
    ss.ss_sp = reinterpret_cast<void*>(k.altstack_sp);
    ss.ss_flags = k.altstack_flags;
    ss.ss_size = k.altstack_size;
    write_memory(c.tid, at, &ss, sizeof ss);
    int64_t r = rs.call(SYS_sigaltstack, {at, 0});
    write_memory(c.tid, at, old.data(), old.size());
    check(r, "sigaltstack");
  }
}

/// Copies the extended register state (x87, SSE, AVX...) of `from` to `to`.
void copy_xstate(pid_t from, pid_t to) {
  std::vector<uint8_t> buf(kXstateRoom);
  iovec iov{buf.data(), buf.size()};
  if (ptrace(PTRACE_GETREGSET, from, NT_X86_XSTATE, &iov) == 0) {
    if (ptrace(PTRACE_SETREGSET, to, NT_X86_XSTATE, &iov) != 0)
      throw SystemError("PTRACE_SETREGSET(NT_X86_XSTATE)", errno);
    return;
  }
  user_fpregs_struct fp{};  // no XSAVE: the legacy area is all there is
  if (ptrace(PTRACE_GETFPREGS, from, nullptr, &fp) != 0)
    throw SystemError("PTRACE_GETFPREGS", errno);
  if (ptrace(PTRACE_SETFPREGS, to, nullptr, &fp) != 0) throw SystemError("PTRACE_SETFPREGS", errno);
}

/// The `syscall` instruction to inject with in `t`: the one it waits at when at a syscall's
/// entry, else the last one it ran (0: none known).
uint64_t injection_insn(const ReplayTask& t, const Registers& now) {
  return t.at_entry ? now.rip - 2 : t.syscall_insn;
}

/// Puts `t` (stopped anywhere) at the entry of the syscall whose entry registers are `entry`
/// (a PTRACE_SYSEMU entry stop: rip after the instruction, orig_rax the number): it enters
/// the syscall again from its instruction and stops there with the same registers.
void stand_at_entry(ReplayTask& t, const Registers& entry) {
  Registers enter = entry;
  enter.rip -= 2;
  enter.rax = entry.orig_rax;
  set_regs(t.tid, enter);
  Stop s = run_to_stop(t, PTRACE_SYSEMU);
  if (s.kind != Stop::SyscallEntry || first_register_difference(entry, get_regs(t.tid)))
    throw DivergenceError("copied thread " + std::to_string(t.rec_tid) +
                          " did not stop at its syscall's entry");
}

/// Gives `t` back the registers `regs` it had before rewind ran syscalls in it: at the same
/// syscall entry when it waits at one (ReplayTask::at_entry).
void put_back(ReplayTask& t, const Registers& regs) {
  if (t.at_entry)
    stand_at_entry(t, regs);
  else
    set_regs(t.tid, regs);
}

/// What a task's next resume must do (deliver a signal, restart an interrupted syscall,
/// ReplayTask): it belongs to the program's next run, so syscalls injected into the task
/// (whose resumes would use it up, run_once) must run with it set aside.
struct PendingResume {
  int resume_sig = 0;
  bool restart_pending = false, signal_injected = false;

  /// Takes `t`'s pending resume, leaving it none.
  static PendingResume take(ReplayTask& t) {
    PendingResume p{t.resume_sig, t.restart_pending, t.signal_injected};
    t.resume_sig = 0;
    t.restart_pending = t.signal_injected = false;
    return p;
  }
  /// Gives it to `t`.
  void give(ReplayTask& t) const {
    t.resume_sig = resume_sig;
    t.restart_pending = restart_pending;
    t.signal_injected = signal_injected;
  }
};

/// Re-creates task `orig` in a copy, by a clone injected in the copy's task `leader` at `insn`
/// (the caller puts the leader's registers back), then the original's state given to the new
/// task: a thread of the leader's process (`flags` kThreadFlags), or a process sharing its
/// memory (CLONE_VM without CLONE_THREAD).
ReplayTask clone_task(ReplayTask& leader, uint64_t insn, const ReplayTask& orig, uint64_t flags) {
  RemoteSyscall rs(leader, insn, get_regs(leader.tid));
  if (orig.kernel.clear_child_tid) flags |= CLONE_CHILD_CLEARTID;
  bool thread = flags & CLONE_THREAD;
  // clone(flags, stack, parent_tid, child_tid, tls) on x86-64; stack 0: the caller's (the
  // new task runs nothing before it gets its own registers).
  rs.call(SYS_clone, {flags, 0, 0, orig.kernel.clear_child_tid, 0});
  const Stop& s = rs.last_stop();
  if (s.kind != Stop::Event ||
      (s.sig != PTRACE_EVENT_CLONE && (thread || s.sig != PTRACE_EVENT_FORK)))
    throw DivergenceError("a clone injected to copy task " + std::to_string(orig.rec_tid) +
                          " created no task");
  ReplayTask c = orig;
  c.interrupt_sent = false;  // a new task: no interrupt of the original's is pending in it
  // Set aside while syscalls run in it (a read interrupted to restart lost its restart).
  PendingResume pending = PendingResume::take(c);
  c.tid = pid_t(get_event_msg(leader.tid));
  c.pid = thread ? leader.pid : c.tid;
  if (!thread) c.vm_parent = leader.tid;
  wait_new_task(c);
  if (run_to_stop(leader, PTRACE_SYSCALL).kind != Stop::SyscallExit)
    throw DivergenceError("an injected clone did not return in the copy");
  ThreadKernelState k = orig.kernel;
  k.clear_child_tid = 0;  // set by the clone
  give_kernel_state(c, insn, k, true);
  copy_xstate(orig.tid, c.tid);
  uint64_t mask = 0;
  if (!try_get_sigmask(orig.tid, mask) || !try_set_sigmask(c.tid, mask))
    throw DivergenceError("thread " + std::to_string(orig.rec_tid) + " is gone");
  c.blocked.reset();  // set just now, after the syscalls run in it
  put_back(c, get_regs(orig.tid));
  pending.give(c);
  return c;
}

/// The first thread (the leader: tid == pid) among one process's `threads`, or nullptr when it
/// has ended.
ReplayTask* first_thread(const std::vector<ReplayTask*>& threads) {
  for (ReplayTask* t : threads)
    if (t->tid == t->pid) return t;
  return nullptr;
}

/// Re-creates each of `threads` but `first` as a thread of `leader`, the copy of `first`, by
/// clones injected in it, into `out` by recorded tid; the leader's registers and pending
/// resume are put back once, after all of them. Throws DivergenceError.
void clone_threads(ReplayTask& leader, const std::vector<ReplayTask*>& threads,
                   const ReplayTask* first, std::map<pid_t, ReplayTask>& out) {
  if (threads.size() == 1) return;
  Registers regs = get_regs(leader.tid);
  uint64_t insn = injection_insn(leader, regs);
  if (!insn) throw DivergenceError("task has no syscall instruction to clone with");
  PendingResume pending = PendingResume::take(leader);  // the clones run in it
  for (ReplayTask* t : threads)
    if (t != first) out[t->rec_tid] = clone_task(leader, insn, *t, kThreadFlags);
  put_back(leader, regs);
  pending.give(leader);
}

}  // namespace

ReplayTask fork_task(ReplayTask& t) {
  Registers saved = get_regs(t.tid);
  uint64_t insn = injection_insn(t, saved);
  if (!insn) throw DivergenceError("task has no syscall instruction to fork with");
  // What the next resume must do belongs to the program's next run, not to the injected
  // fork: set aside, then given to both.
  PendingResume pending = PendingResume::take(t);
  RemoteSyscall rs(t, insn, saved);
  // A fork whose copy is the child of t's parent (CLONE_PARENT), not of t: for the first
  // process that is rewind itself, which reaps the copy when it kills it. A child of t would
  // stay a zombie while t lives (t never waits for it), one for each checkpoint or
  // diversion dropped.
  rs.call(SYS_clone, {CLONE_PARENT | SIGCHLD, 0, 0, 0, 0});
  const Stop& s = rs.last_stop();
  if (s.kind != Stop::Event || s.sig != PTRACE_EVENT_FORK)
    throw DivergenceError("a checkpoint fork did not create a process");
  ReplayTask c = t;
  c.interrupt_sent = false;  // as in clone_thread
  c.tid = c.pid = pid_t(get_event_msg(t.tid));
  wait_new_task(c);
  Stop exit_stop = run_to_stop(t, PTRACE_SYSCALL);  // the parent returns from fork
  if (exit_stop.kind != Stop::SyscallExit)
    throw DivergenceError("a checkpoint fork did not return in the replayed task");
  // fork gives the child no tid address (without CLONE_CHILD_CLEARTID) and no robust list.
  give_kernel_state(c, insn, t.kernel, false);
  for (ReplayTask* x : {&t, &c}) {
    put_back(*x, saved);
    pending.give(*x);
  }
  return c;
}

std::map<pid_t, ReplayTask> copy_process(const std::vector<ReplayTask*>& threads) {
  // The thread group's leader forks: the copy's leader must be the same thread, as the
  // kernel treats a leader's exit apart (it is reported only once the other threads ended).
  ReplayTask* forker = first_thread(threads);
  if (!forker) throw DivergenceError("the process's first thread has ended: it cannot fork");
  std::map<pid_t, ReplayTask> out;
  ReplayTask& leader = out[forker->rec_tid] = fork_task(*forker);
  clone_threads(leader, threads, forker, out);
  return out;
}

std::map<pid_t, ReplayTask> copy_memory_sharer(const std::vector<ReplayTask*>& threads,
                                               ReplayTask& sharer) {
  ReplayTask* first = first_thread(threads);
  if (!first || !first->vm_clone_flags)
    throw DivergenceError("not the first thread of a process sharing its parent's memory");
  // What else the original shares with its parent (files, handlers...) is shared in the copy
  // too. CLONE_PARENT: the copy is the child of the sharer's parent, as fork_task's copies.
  uint64_t flags =
      CLONE_VM | CLONE_PARENT | SIGCHLD |
      (first->vm_clone_flags & (CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_SYSVSEM));
  Registers regs = get_regs(sharer.tid);
  uint64_t insn = injection_insn(sharer, regs);
  if (!insn) throw DivergenceError("task has no syscall instruction to clone with");
  PendingResume pending = PendingResume::take(sharer);
  std::map<pid_t, ReplayTask> out;
  ReplayTask& leader = out[first->rec_tid] = clone_task(sharer, insn, *first, flags);
  put_back(sharer, regs);
  pending.give(sharer);
  clone_threads(leader, threads, first, out);
  return out;
}

}  // namespace rwd
