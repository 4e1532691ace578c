// Replaying syscall events, by the replay policy of the syscall table (syscall_table.h):
// emulated from the trace, run for real, or by the code for mmap, mremap, fork-like
// syscalls, exits, rt_sigreturn, System V shared memory and process_vm_writev; and the task's
// syscall buffer around its events (replay_session_impl.h).
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "engine/arch/syscall_table.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/os/tracee_writes.h"
#include "engine/replay/buffer_fill.h"
#include "engine/replay/output_echo.h"
#include "engine/replay/outside_syscalls.h"
#include "engine/replay/recorded_memory.h"
#include "engine/replay/remote_syscall.h"
#include "engine/replay/replay_session_impl.h"
#include "engine/trace/buffered_records.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {
constexpr uint64_t kPage = 4096;

/// Keeps t.kernel up to date after the replay ran syscall event `e` (entry registers `regs`)
/// for real and it succeeded: the per-thread state a copy of the process must re-create.
void note_thread_state(ReplayTask& t, const Event& e, const Registers& regs) {
  if (e.result < 0) return;
  switch (e.syscallno()) {
    case SYS_set_tid_address:
      t.kernel.clear_child_tid = regs.rdi;
      break;
    case SYS_set_robust_list:
      t.kernel.robust_list = regs.rdi;
      t.kernel.robust_len = regs.rsi;
      break;
    case SYS_sigaltstack: {
      if (!regs.rdi) break;
      stack_t ss{};
      read_memory_exact(t.tid, regs.rdi, &ss, sizeof ss);
      bool off = ss.ss_flags & SS_DISABLE;
      t.kernel.altstack_sp = off ? 0 : uint64_t(ss.ss_sp);
      t.kernel.altstack_size = off ? 0 : ss.ss_size;
      t.kernel.altstack_flags = off ? 0 : ss.ss_flags;
      break;
    }
  }
}
}  // namespace

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

void Replayer::register_buffer(ReplayTask& t, const Registers& call) {
  // rewind_register_buffer(buffer, size, defer_start, defer_end, features, fd): preload/hook.c
  t.syscall_buffer = call.rdi;
  t.defer_start = call.rdx;
  t.defer_end = call.r10;
  t.buffer_features = call.r8;
  uint32_t replaying = 1;
  write_memory(t.tid, t.syscall_buffer + RWD_CONTROL_OFFSET, &replaying, sizeof replaying);
}

void Replayer::fill_buffer(ReplayTask& t, const Event& e) {
  if (!t.syscall_buffer)
    throw diverged(e, "the recording has buffered syscalls, but the task registered no buffer");
  // The library leaves room for the end mark after its records (preload/hook.c has_room).
  if (e.buffered.size() + RWD_RECORD_HEADER > RWD_BUFFER_SIZE - RWD_DATA_OFFSET)
    throw TraceError(trace_.dir() + "/events: " + where(e) + ": buffered records too large");
  uint32_t used = buffered_bytes_used(e.buffered);  // well-formed, or a TraceError
  const bool pause_in_e =
      pause_request_ && pause_request_->event == e.number && pause_request_->rec_tid == e.tid;
  std::vector<uint32_t> pauses;
  if (t.buffer_features & RWD_FEATURE_PAUSE) {
    // A point between events lies after all of its event's records: pausing after the last
    // one lets reach_point look for it from there only. (An abort mark is never used up:
    // the call it stands for is made again traced.)
    bool point = e.kind == EventKind::Sched || (e.kind == EventKind::Signal && !e.synchronous);
    if (point && used > 0) pauses.push_back(used);
    if (pause_in_e) pauses.push_back(pause_request_->pos);
  }
  const uint32_t from = std::exchange(resume_used_, 0);
  if (pause_in_e && pause_request_->pos < from)
    throw Error(where(e) + ": the checkpoint this replay started from lies after byte " +
                std::to_string(pause_request_->pos) + " of task " + std::to_string(e.tid) +
                "'s buffered records, the point to pause at");
  try {
    rwd::fill_buffer(t, e.buffered, std::move(pauses), from);
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

void Replayer::replay_shared_file_change(const Event& e, const Registers& regs) {
  // The mappings of the file show the replay's copy (shared_file_writes.cpp).
  if (!e.resizes_shared_file())
    return shared_->write(e.shared_file, e.written_memory.addr, e.written_memory.bytes);
  if (e.syscallno() == SYS_fallocate && (regs.rsi & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)))
    shared_->zero(e.shared_file, regs.rdx, regs.r10);  // fallocate(2): the range reads as zeros
  shared_->resize(e.shared_file, e.written_memory.addr);
}

void Replayer::emulate(ReplayTask& t, const Event& e, Registers regs) {
  write_recorded(t.tid, e.memory);
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

int64_t Replayer::execute(ReplayTask& t, const Event& e, const Registers& regs) {
  if (std::optional<int64_t> r = syscall_from_outside(t.tid, regs, e.result)) {
    t.blocked.reset();  // it may have set the mask
    finish_syscall(t.tid, regs, *r);
    return *r;
  }
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
  if (syscall_failed(e.result)) return emulate(t, e, regs);
  uint64_t target = uint64_t(e.result), len = regs.rsi, prot = regs.rdx, flags = regs.r10;
  flags = (flags & ~uint64_t(MAP_FIXED_NOREPLACE)) | MAP_FIXED;
  RemoteSyscall rs(t, regs.rip - 2, regs);
  int64_t r;
  if (e.file.empty()) {
    // Anonymous memory, or a device such as /dev/zero: anonymous memory at the same place.
    if (!(flags & MAP_ANONYMOUS)) flags = (flags & ~uint64_t(MAP_SHARED_VALIDATE)) | MAP_PRIVATE;
    r = rs.call(SYS_mmap, {target, len, prot, flags | MAP_ANONYMOUS, uint64_t(-1), 0});
  } else {
    // Map the trace's copy, or for a shared file the replay's one copy of it, set to the
    // contents the recorder saved now. First put anonymous memory there to hold the path for
    // openat.
    std::string path = trace_.file_path(e.file);
    if (e.shared_file) path = shared_->sync(e.shared_file, path);
    if (path.size() + 1 > kPage)
      throw Error("trace path too long: " + path);  // mmap is page-granular
    // The path goes where the library leaves room for it (zeroed again after), or else into
    // one page at the target, which the file's mapping replaces (a writable anonymous
    // mapping as long as a huge file's would exceed what the kernel commits).
    const bool scratch =
        t.syscall_buffer && path.size() + 1 <= RWD_UNTRACED_PAGE + kPage - RWD_REPLAY_SCRATCH;
    uint64_t path_at = scratch ? uint64_t(RWD_REPLAY_SCRATCH) : target;
    if (!scratch) {
      r = rs.call(SYS_mmap, {target, kPage, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, uint64_t(-1), 0});
      if (r != int64_t(target)) throw diverged(e, "cannot map memory at " + hex(target));
    }
    write_memory(t.tid, path_at, path.c_str(), path.size() + 1);
    uint64_t mode = e.shared_file ? O_RDWR : O_RDONLY;
    int64_t fd = rs.call(SYS_openat, {uint64_t(AT_FDCWD), path_at, mode | O_CLOEXEC});
    if (scratch)
      write_memory(t.tid, path_at, std::string(path.size() + 1, '\0').data(), path.size() + 1);
    if (fd < 0) throw diverged(e, "replayed task cannot open " + path);
    // Other shared file mappings become private: replay must never write to the saved file.
    uint64_t fflags =
        (flags & ~uint64_t(MAP_SHARED_VALIDATE)) | (e.shared_file ? MAP_SHARED : MAP_PRIVATE);
    r = rs.call(SYS_mmap, {target, len, prot, fflags, uint64_t(fd), regs.r9});
    rs.call(SYS_close, {uint64_t(fd)});
  }
  if (r != e.result)
    throw diverged(e, "mmap returned " + hex(uint64_t(r)) + " in replay, " +
                          hex(uint64_t(e.result)) + " when recorded");
  // What the recorder wrote at this event: the library's list of shared files
  // (shared_file_writes.cpp) and its descriptor cache's switch.
  write_recorded(t.tid, e.memory);
  finish_syscall(t.tid, regs, e.result);
}

void Replayer::replay_mremap(ReplayTask& t, const Event& e, const Registers& regs) {
  if (syscall_failed(e.result)) return emulate(t, e, regs);
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

void Replayer::replay_sysv_shm(ReplayTask& t, const Event& e, const Registers& regs) {
  int rec_id = int(regs.rdi);
  if (e.syscallno() == SYS_shmctl) {
    emulate(t, e, regs);
    if (e.result == 0 && (regs.rsi & ~uint64_t(0x100)) == IPC_RMID) sysv_.remove(rec_id);
    return;
  }
  if (syscall_failed(e.result)) return emulate(t, e, regs);
  // The recorder saved the segment's pages that held data and always its last one
  // (syscall_capture.cpp): the regions end where the segment ends.
  uint64_t at = uint64_t(e.result), end = at;
  for (const auto& m : e.memory) {
    if (m.addr < at) throw TraceError(trace_.dir() + "/events: " + where(e) + ": bad segment");
    end = std::max<uint64_t>(end, m.addr + m.bytes.size());
  }
  if (end == at || (end - at) % kPage)
    throw TraceError(trace_.dir() + "/events: " + where(e) + ": the segment's size is missing");
  int real = sysv_.real_id(rec_id, end - at);
  for (const auto& m : e.memory) sysv_.write(rec_id, m.addr - at, m.bytes);
  // At the recorded address, replacing what is mapped there if the program asked for that
  // (SHM_REMAP, shmat(2)).
  RemoteSyscall rs(t, regs.rip - 2, regs);
  int64_t r =
      rs.call(SYS_shmat, {uint64_t(real), at, regs.rdx & (SHM_RDONLY | SHM_EXEC | SHM_REMAP)});
  finish_syscall(t.tid, regs, r);
  if (r != e.result)
    throw diverged(e, "shmat returned " + hex(uint64_t(r)) + " in replay, " +
                          hex(uint64_t(e.result)) + " when recorded");
}

void Replayer::replay_vm_write(ReplayTask& t, const Event& e, const Registers& regs) {
  emulate(t, e, regs);
  // From inside a PID namespace the event names the task by its recorded tid.
  auto target = tasks_.find(e.written_tid ? e.written_tid : pid_t(regs.rdi));
  if (e.result <= 0 || target == tasks_.end() || target->second.state == TaskState::Exited)
    return;  // nothing written, or into a process outside the recording
  // The kernel copies the local iovecs' bytes, in order, into the remote ones, and returns
  // how many it wrote (process_vm_writev(2)): the same bytes, read from this task's memory.
  std::vector<uint8_t> bytes;
  for (const iovec& io : read_iovecs(t.tid, regs.rsi, regs.rdx)) {
    size_t n = std::min<size_t>(io.iov_len, size_t(e.result) - bytes.size());
    std::vector<uint8_t> part = read_memory(t.tid, uint64_t(io.iov_base), n);
    bytes.insert(bytes.end(), part.begin(), part.end());
    if (bytes.size() >= size_t(e.result)) break;
  }
  size_t done = 0;
  for (const iovec& io : read_iovecs(t.tid, regs.r10, regs.r8)) {
    size_t n = std::min(io.iov_len, bytes.size() - done);
    if (n) write_memory(target->second.tid, uint64_t(io.iov_base), bytes.data() + done, n);
    done += n;
    if (done == bytes.size()) break;
  }
}

void Replayer::replay_proc_mem_write(const Event& e) {
  // A write into /proc/PID/mem (proc_mem_writes.cpp): the same bytes into the replayed process.
  auto target = tasks_.find(e.written_tid);
  if (target == tasks_.end() || target->second.state == TaskState::Exited)
    throw diverged(e, "the task " + std::to_string(e.written_tid) +
                          " whose memory this write changed is not replayed");
  write_recorded(target->second.tid, e.written_memory);
}

void Replayer::replay_ptrace(ReplayTask& t, const Event& e, const Registers& regs) {
  emulate(t, e, regs);
  const long request = long(regs.rdi);
  const bool syscalls = turns_library_off(request);  // the recorder turned it off here
  if (e.result != 0 || !(is_tracee_write(request) || syscalls)) return;  // a read, a failure
  // Debug registers the recorder kept without arming them (ptrace_emulation.cpp).
  if (request == PTRACE_POKEUSER && debug_register_at(regs.rdx) >= 0) return;
  const pid_t named = e.written_tid ? e.written_tid : pid_t(regs.rsi);  // (as replay_vm_write)
  auto target = tasks_.find(named);
  // Resumed from the seccomp stop of its exit, where the exit's event came first (a program's
  // filter without rewind's: the recorder took the call before the kernel's seccomp stop):
  // its library is nothing to turn off.
  if (syscalls && target != tasks_.end() && target->second.state == TaskState::Exited) return;
  if (target == tasks_.end() || target->second.state == TaskState::Exited)
    throw diverged(e, "the tracee " + std::to_string(named) + " of this ptrace is not replayed");
  if (syscalls) {
    // The recorder turned the tracee's preload library off here (ptrace_emulation.cpp).
    const ReplayTask& x = target->second;
    if (x.syscall_buffer && !switch_library_off_at(x.tid, x.syscall_buffer))
      throw diverged(
          e, "the preload library of task " + std::to_string(named) + " could not be turned off");
    return;
  }
  int64_t r = apply_tracee_write(t.tid, target->second.tid, request, regs.rdx, regs.r10);
  if (r != 0)
    throw diverged(e, "the replayed ptrace write to task " + std::to_string(named) + " failed (" +
                          std::to_string(r) + ")");
}

void Replayer::replay_fork(ReplayTask& t, const Event& e, const Registers& regs) {
  if (e.child_tid == 0) return emulate(t, e, regs);  // the fork failed when recorded
  CloneArgs args = decode_clone_args(t.tid, regs);
  // The new task stays in the replayer's namespaces: what it did in its own was recorded (the
  // calls that depend on them are emulated), and there it could not open the trace's files
  // or the replay's copies of shared files (/proc/PID/fd of the replayer: a new user
  // namespace has no rights over them, user_namespaces(7)).
  const uint64_t own_ns = args.flags & kNamespaceCloneFlags;
  const bool clone3 = regs.orig_rax == SYS_clone3;
  uint64_t a0 = regs.rdi;
  if (own_ns && clone3) {
    const uint64_t flags = args.flags & ~own_ns;
    write_memory(t.tid, regs.rdi, &flags, sizeof flags);  // clone_args.flags (offset 0)
  } else if (own_ns) {
    a0 &= ~own_ns;
  }
  RemoteSyscall rs(t, regs.rip - 2, regs);
  rs.call(long(regs.orig_rax), {a0, regs.rsi, regs.rdx, regs.r10, regs.r8, regs.r9});
  if (own_ns && clone3) write_memory(t.tid, regs.rdi, &args.flags, sizeof args.flags);
  const Stop& s = rs.last_stop();
  if (s.kind != Stop::Event ||
      (s.sig != PTRACE_EVENT_FORK && s.sig != PTRACE_EVENT_VFORK && s.sig != PTRACE_EVENT_CLONE))
    throw diverged(e, "the replayed " + syscall_name(e.syscallno()) + " created no task");
  ReplayTask c;
  c.rec_tid = e.child_tid;
  c.tid = pid_t(get_event_msg(t.tid));
  c.pid = s.sig == PTRACE_EVENT_CLONE && args.thread() ? t.pid : c.tid;
  if (args.shares_memory() && !args.thread()) c.vm_parent = t.tid;
  if (args.shared_memory_process()) c.vm_clone_flags = args.flags;
  // It starts just after the clone's `syscall` instruction, which its memory holds too (a
  // copy or the same): a copy of its process can be made there (process_copy.h) before it
  // makes a syscall of its own, or when it makes only buffered ones.
  c.syscall_insn = regs.rip - 2;
  if (c.pid == c.tid) {  // a copy of, or the same, memory
    c.syscall_buffer = t.syscall_buffer;
    c.buffer_features = t.buffer_features;
    c.defer_start = t.defer_start;
    c.defer_end = t.defer_end;
  }
  // The kernel's per-thread state of the new task (kernel/fork.c copy_process): no robust
  // list; the alternate signal stack inherited unless it shares memory without vfork.
  if (args.flags & CLONE_CHILD_CLEARTID) c.kernel.clear_child_tid = args.child_tid;
  if (!args.shares_memory() || (args.flags & CLONE_VFORK)) {
    c.kernel.altstack_sp = t.kernel.altstack_sp;
    c.kernel.altstack_size = t.kernel.altstack_size;
    c.kernel.altstack_flags = t.kernel.altstack_flags;
  }
  wait_new_task(c);
  if (own_ns && clone3 && !args.shares_memory())  // its copy of the struct, as recorded
    write_memory(c.tid, regs.rdi, &args.flags, sizeof args.flags);
  fix_child_tids(t, c, e, args);
  // What the recorder wrote at this event: 0 into librewind_preload.so's switch when the child
  // shares its parent's memory (RWD_FEATURE_SWITCH), its descriptor cache's switch when the
  // child splits memory and descriptor table (fd_cache.cpp), so that the library runs as it did.
  write_recorded(t.tid, e.memory);
  // And into the child's own memory, where it shares its parent's descriptor table without
  // its memory: the library's descriptor cache off there too (fd_cache.cpp).
  if (e.written_tid && e.written_tid == e.child_tid) write_recorded(c.tid, e.written_memory);
  tasks_[e.child_tid] = c;
  t.state = TaskState::ForkPending;
  t.fork_result = e.result;
  // The recording saw the parent return from its fork at this event: it does so now, running
  // none of its own code, so that it stands where the recording says (rax the child's pid)
  // and its process can be copied for a checkpoint. A vfork's parent waits in the kernel
  // until its child execs or exits: it returns at its next event (begin_event).
  if (!(args.flags & CLONE_VFORK)) finish_fork(t);
}

void Replayer::fix_child_tids(ReplayTask& parent, ReplayTask& child, const Event& e,
                              const CloneArgs& args) {
  // The kernel wrote the new task's real tid where clone was asked to (CLONE_PARENT_SETTID,
  // CLONE_CHILD_SETTID, clone(2)); the program must see the recorded one, as it did: the
  // parent's number for the child, and the child's own (they differ in a PID namespace).
  uint32_t tid = uint32_t(e.result), own = uint32_t(e.child_own_tid ? e.child_own_tid : e.result);
  if ((args.flags & CLONE_PARENT_SETTID) && args.parent_tid)
    write_memory(parent.tid, args.parent_tid, &tid, 4);
  if ((args.flags & CLONE_CHILD_SETTID) && args.child_tid)
    write_memory(child.tid, args.child_tid, &own, 4);
}

void Replayer::replay_exit(ReplayTask& t, const Event& e, const Registers& regs) {
  RemoteSyscall rs(t, regs.rip - 2, regs);
  long nr = long(regs.orig_rax);
  rs.enter(nr, {regs.rdi});
  t.ended_by_exit_call = true;
  bool threads_left = false;
  for (auto& [rec, x] : tasks_)
    threads_left |= &x != &t && x.pid == t.pid && x.state != TaskState::Exited;
  if (nr == SYS_exit && t.tid == t.pid && threads_left) {
    // The main thread ends first (pthread_exit from main): the kernel reports its end once
    // the other threads have ended (wait(2)); its Exit event collects it then (begin_event).
    resume(t.tid, PTRACE_CONT, 0);
    t.state = TaskState::Exited;
    t.status_pending = true;
    return;
  }
  if (nr == SYS_exit_group && t.tid == t.pid) {
    // The leader's own end is reported only once its group's other threads are collected
    // (wait(2)): they die now, in their stops, of the group's exit; collect them first (their
    // Exit events come later and find them ended).
    resume(t.tid, PTRACE_SYSCALL, 0);
    collect_group_ends(t.pid, &t);
    Stop s = wait_stop(t, PTRACE_SYSCALL);
    if (s.kind != Stop::Exited) throw diverged(e, "the task did not end");
    return;
  }
  rs.finish(nr);
  if (rs.last_stop().kind != Stop::Exited) throw diverged(e, "the task did not end");
  // Another thread's exit_group ends the others too, wherever they stand: none of them may
  // run on towards its Exit event.
  if (nr == SYS_exit_group) collect_group_ends(t.pid, &t);
}

void Replayer::on_syscall(ReplayTask& t, const Event& e) {
  Registers regs = get_regs(t.tid);
  if (auto d = first_register_difference(e.regs, regs)) throw diverged(e, *d);
  t.syscall_insn = regs.rip - 2;
  long nr = e.syscallno();
  if (nr == RWD_SYS_REGISTER_BUFFER) {  // answered by the recorder, not the kernel
    emulate(t, e, regs);
    // 1: registered without its desched counter (SyscallBuffer::set_from_call).
    if (e.result >= 0) register_buffer(t, regs);
    t.patching_libc = e.result >= 0 && (regs.r8 & RWD_FEATURE_PATCH_END);
    return;
  }
  if (nr == RWD_SYS_PATCHED && t.patching_libc) {  // answered by the recorder too
    t.patching_libc = false;
    return emulate(t, e, regs);
  }
  const SyscallSpec* spec = syscall_spec(nr);
  // A number the kernel does not implement: the recorder answered -ENOSYS (record_syscall.cpp).
  if (!spec && !syscall_number_known(nr) && e.result == -ENOSYS) return emulate(t, e, regs);
  // A call its tracer skipped at a stop at its entry (orig_rax -1): its result is the rax the
  // tracer left (record_syscall.cpp).
  if (nr == -1) return emulate(t, e, regs);
  if (!spec) throw TraceError(trace_.dir() + "/events: " + where(e) + ": unknown syscall");
  switch (spec->replay) {
    case ReplayPolicy::Emulate:
      emulate(t, e, regs);
      if (e.written_tid) replay_proc_mem_write(e);
      if (e.writes_shared_file()) replay_shared_file_change(e, regs);
      return;
    case ReplayPolicy::Execute:
      execute_checked(t, e, regs);
      return note_thread_state(t, e, regs);
    case ReplayPolicy::ExecuteSetResult: {
      execute(t, e, regs);
      finish_syscall(t.tid, regs, e.result);
      return note_thread_state(t, e, regs);
    }
    case ReplayPolicy::Mmap:
      return replay_mmap(t, e, regs);
    case ReplayPolicy::Mremap:
      return replay_mremap(t, e, regs);
    case ReplayPolicy::SysvShm:
      return replay_sysv_shm(t, e, regs);
    case ReplayPolicy::VmWrite:
      return replay_vm_write(t, e, regs);
    case ReplayPolicy::Ptrace:
      return replay_ptrace(t, e, regs);
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

}  // namespace rwd
