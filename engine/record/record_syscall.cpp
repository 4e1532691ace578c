// Recording a syscall (rr's record_syscall): at its entry, what the table says about it
// (unsupported, answered -ENOSYS, may block); at its exit, its result and out-parameters, the
// file a mmap maps, the output a write makes; fork-like syscalls' new tasks
// (record_session.h).
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <utility>

#include "engine/arch/clone_args.h"
#include "engine/arch/socket_options.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/insn_patch.h"
#include "engine/os/proc.h"
#include "engine/os/tracee_writes.h"
#include "engine/record/blocking.h"
#include "engine/record/bpf_capture.h"
#include "engine/record/exec_capture.h"
#include "engine/record/record_session.h"
#include "engine/record/syscall_buffer.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

/// The most data (allocated bytes: a sparse file's holes do not count) of a file mapped shared
/// from a read-only descriptor that is saved as a shared file (FileSaver::save_shared: hashed
/// and copied at each mapping, a memfd copy in replay, in memory). As
/// SharedFiles::kSnapshotLimit, so that such a file alone leaves its process checkpoints.
constexpr uint64_t kReadOnlySharedMax = 64ull << 20;

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/// Whether process `pid` has a mapping shared and writable (MAP_SHARED memory, a file mapped
/// shared for writing, an attached System V segment): a fork's child shares it (fork(2)).
/// False where its maps cannot be read.
bool shares_writable_memory(pid_t pid) {
  try {
    for (const ProcMapping& m : read_proc_maps(pid))
      if (m.shared && m.write) return true;
  } catch (const SystemError&) {
  }
  return false;
}
}  // namespace

bool RecordSession::library_call_at_entry(const RecordTask& t) const {
  const Registers& r = t.entry;
  if (r.orig_rax == RWD_SYS_PATCHED) return t.patching_libc;
  return r.orig_rax == RWD_SYS_REGISTER_BUFFER && r.rsi == RWD_BUFFER_SIZE &&
         maps_file_named(t.pid, r.rdx, RWD_LIBRARY_NAME);
}

void RecordSession::on_syscall_entry(RecordTask& t) {
  if (user_notif_stop(t, true)) return;
  if (syscall_stop_for_tracer(t, true)) return;  // on again when its tracer resumes it
  if (seccomp_stop_for_tracer(t)) return;        // so too (seccomp judges the call first)
  if (exit_stop_for_tracer(t)) return;           // so too
  t.exit_reported = false;
  t.entry = t.user_notif == RecordTask::UserNotif::None ? get_regs(t.tid) : t.user_notif_entry;
  t.library_call = library_call_at_entry(t);
  t.state = RunState::InSyscall;
  t.exec_seen = t.fork_recorded = t.skip_syscall = t.entry_marked = t.blocked = false;
  t.entry_marked = std::exchange(t.entry_reported, false);  // syscall_stop_for_tracer's event
  if (AddressSpace& s = space(t); s.turns->write_waits && s.turns->active == t.tid) {
    // A write into its memory waits for it (hold_for_proc_mem_write): at this entry's event
    // it runs no code until its exit, and waits there for its turn.
    // A call that holds it past syscalls waits on for its exit, where it gives up its turn.
    take_buffered(t);  // the calls its buffer made before this one come first
    if (!t.entry_marked) mark_entry(t);
    if (!s.turns->hold_past_syscalls) start_held_write(s);
  }
  t.exec_former_tid = 0;
  t.answered_memory.clear();
  t.named_tid = 0;
  t.write_target.reset();
  take_buffered(t);
  if (t.redeliver_sig) {
    // The call an abort made traced (its first syscall since): the signal that interrupted the
    // buffered call interrupts this one, with the siginfo it came with (on_signal).
    put_off_signal(t, std::exchange(t.redeliver_sig, 0), t.redeliver_si);
    send_put_off(t);
  }
  long nr = long(t.entry.orig_rax);
  if (auto answer = std::exchange(t.program_seccomp_answer, std::nullopt)) {
    answer_syscall(t, *answer);  // what the program's own filter said (program_filter.cpp)
    if (auto si = std::exchange(t.program_seccomp_sigsys, std::nullopt)) {
      put_off_signal(t, SIGSYS, *si);  // arrives as the call returns
      send_put_off(t);
    }
    return resume_syscall(t);
  }
  if (t.library_call && nr == RWD_SYS_REGISTER_BUFFER) {
    // librewind_preload.so's registration: rewind answers it, the kernel never sees it.
    answer_syscall(t, -ENOSYS);
    const Registers& r = t.entry;
    // Not for a task whose tracer follows its syscalls (PTRACE_SYSCALL): each must stop.
    if (seccomp_ && !(t.tracer != 0 && t.tracer_syscalls))
      t.skip_result = t.buffer.set_from_call(t.pid, t.tid, r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9);
    if (t.skip_result >= 0) {
      note_counter_fd(t);
      space(t).buffer_exclusions.push_back(t.buffer.digest_exclusion());
      if (r.r8 & RWD_FEATURE_SWITCH) note_library_switch(t, r.rdi);
      if (r.r8 & RWD_FEATURE_FD_CACHE) note_fd_cache(t, r.rdi);
      if (r.r8 & RWD_FEATURE_SHARED_FILES) space(t).shared_files = shared_files_at(t.tid, r.rdi);
      if (r.r8 & RWD_FEATURE_TURNS) note_turns_switch(t, r.rdi, t.answered_memory);
    }
    t.patching_libc = t.skip_result >= 0 && (r.r8 & RWD_FEATURE_PATCH_END);
    return resume_syscall(t);
  }
  if (t.library_call && nr == RWD_SYS_PATCHED) {
    // The library's patching of libc is over (rewind_preload_abi.h): an event of its own, so
    // that a replay knows where to put its breakpoints back.
    t.patching_libc = false;
    answer_syscall(t, 0);
    return resume_syscall(t);
  }
  const bool emulated = std::exchange(t.sysemu_entry, false);
  if ((nr == -1 || emulated) && t.entry_marked) {
    // Its tracer skipped the call at a stop at its entry (orig_rax -1), or emulates it
    // (PTRACE_SYSEMU): the kernel runs nothing and returns rax as the tracer left it
    // (arch/x86/entry/common.c do_syscall_64, kernel/entry/common.c syscall_trace_enter).
    t.sysemu_skipped = emulated;
    answer_syscall(t, int64_t(t.entry.rax));
    return resume_syscall(t);
  }
  const SyscallSpec* spec = syscall_spec(nr);
  if (!spec && !syscall_number_known(nr)) {
    // A number the kernel does not implement (negative, past its table, another tool's or
    // rewind's private numbers made by the program itself): -ENOSYS, as natively, recorded
    // as the call's result. The kernel never sees it.
    answer_syscall(t, -ENOSYS);
    return resume_syscall(t);
  }
  if (!spec)
    throw UnsupportedError("syscall " + std::to_string(nr) + " (" + syscall_name(nr) +
                           ") is not supported yet");
  ThreadGroup& g = group(t);
  AddressSpace& as = space(t);
  // Inside a PID namespace the program names processes by its namespace's numbers: the event
  // keeps rewind's, which replay knows its tasks by.
  if (nr == SYS_process_vm_writev) {
    const pid_t target = recorded_task_named(t.tid, pid_t(t.entry.rdi));
    if (target && target != pid_t(t.entry.rdi)) t.named_tid = target;
  }
  if (nr == SYS_bpf && !bpf_command_supported(t.entry.rdi))
    throw UnsupportedError(std::string("bpf ") + bpf_command_name(t.entry.rdi) +
                           " is not supported yet");
  std::optional<int64_t> waited;
  if (nr == SYS_ptrace) {
    on_ptrace_entry(t);  // answered: rewind is the real tracer (ptrace_emulation.cpp)
  } else if ((nr == SYS_wait4 || nr == SYS_waitid) && (waited = tracer_wait_answer(t))) {
    answer_syscall(t, *waited);  // a tracee's stop, which the kernel does not know of
  } else if ((nr == SYS_wait4 || nr == SYS_waitid) && tracer_wait_must_block(t)) {
    Registers r = t.entry;
    r.orig_rax = SYS_pause;
    set_regs(t.tid, r);
    t.wait_in_pause = true;
  } else if (nr == SYS_prctl && (answer_tsc_prctl(t) || answer_seccomp_prctl(t))) {
    // Answered here: the program sees its own setting, not rewind's (record_task.h).
  } else if (nr == SYS_setsockopt && refused_socket_option(t.entry.rsi, t.entry.rdx)) {
    // A ring the kernel would fill behind replay's back: unavailable (socket_options.h).
    answer_syscall(t, -ENOPROTOOPT);
  } else if (spec->record == RecordPolicy::Enosys) {
    // Not run: the program sees it unavailable (syscalls.py says why for each).
    answer_syscall(t, -ENOSYS);
  } else {
    wrap_program_filter(t);  // a sandbox's filter, for the program's calls only
  }
  t.snap = snapshot_entry(t.tid, *spec, t.entry);
  note_listing_buffer(t);
  if (spec->has(kExit)) {
    Event e;  // no exit stop follows; the Exit event comes with the task's end
    e.kind = EventKind::Syscall;
    e.tid = t.tid;
    e.regs = t.entry;
    write(e);
    if (nr == SYS_exit_group) start_group_exit(t);
    if (nr == SYS_exit && t.tid == t.pid && g.members.size() > 1) {
      // The main thread ends while other threads run on (pthread_exit from main): the kernel
      // reports its end only once they have all ended (wait(2)). It leaves its process's
      // turns now; its Exit event comes with that report.
      bool was_active = leave_turns(g, t.tid);
      resume_syscall(t);
      if (was_active) schedule(as);
      return;
    }
  } else if ((syscall_may_block(t.entry) || t.user_notif != RecordTask::UserNotif::None ||
              (t.notif_filtered && !seccomp_)) &&
             as.turns->active == t.tid) {
    // (A call its filter sends to a supervisor waits for it: program_filter.cpp.)
    wait_outside_turns(t);
    if (!hold_output_write(t)) resume_syscall(t);
    return schedule(as);
  }
  if (!hold_output_write(t) && !hold_for_shared_mapping(t)) resume_syscall(t);
}

bool RecordSession::answer_tsc_prctl(RecordTask& t) {
  ThreadGroup& g = group(t);
  int64_t result = 0;
  if (t.entry.rdi == PR_GET_TSC) {
    int mode = g.tsc_mode;
    try {
      write_memory(t.tid, t.entry.rsi, &mode, sizeof mode);
    } catch (const SystemError&) {
      result = -EFAULT;  // an unmapped pointer, as the kernel says
    }
  } else if (t.entry.rdi == PR_SET_TSC &&
             (t.entry.rsi == PR_TSC_ENABLE || t.entry.rsi == PR_TSC_SIGSEGV)) {
    g.tsc_mode = int(t.entry.rsi);
  } else {
    return false;  // another option, or an invalid mode: the kernel answers
  }
  answer_syscall(t, result);
  return true;
}

void RecordSession::answer_syscall(RecordTask& t, int64_t result) {
  Registers r = t.entry;
  r.orig_rax = uint64_t(-1);  // no syscall: the kernel goes straight to the exit stop
  set_regs(t.tid, r);
  t.skip_syscall = true;
  t.skip_result = result;
}

void RecordSession::on_syscall_exit(RecordTask& t) {
  if (user_notif_stop(t, false)) return;
  Registers regs = get_regs(t.tid);
  unwrap_program_filter(t, regs);
  long nr = long(t.entry.orig_rax);
  int64_t result = int64_t(regs.rax);
  // A filter installed with a supervisor (seccomp_unotify(2): a listener descriptor for it).
  if (nr == SYS_seccomp && t.entry.rdi == SECCOMP_SET_MODE_FILTER &&
      (t.entry.rsi & SECCOMP_FILTER_FLAG_NEW_LISTENER) && result >= 0)
    t.notif_filtered = true;
  if (t.skip_syscall) {
    regs.rax = uint64_t(t.skip_result);
    result = t.skip_result;
    set_regs(t.tid, regs);
  }
  if (std::exchange(t.wait_in_pause, false)) {
    // Its pause(2) stands for the wait: the wait's number again, and the wait's own restart
    // if a signal, not a tracee, ended it.
    regs.orig_rax = t.entry.orig_rax;
    if (result == kErestartnohand) regs.rax = uint64_t(result = kErestartsys);
    set_regs(t.tid, regs);
  }
  if (std::exchange(t.wait_interrupted, false) && result == kErestartsys) {
    // Interrupted to report a tracee's stop (notify_tracer): reported now, not restarted.
    if (auto waited = tracer_wait_answer(t)) {
      regs.rax = uint64_t(*waited);
      result = *waited;
      set_regs(t.tid, regs);
    }
  }
  if (std::optional<int64_t> shown = hide_counter_fds(t, result)) {
    if (*shown == 0) return list_again(t, regs);
    regs.rax = uint64_t(*shown);
    result = *shown;
    set_regs(t.tid, regs);
  }
  t.resumed_from_exit = true;  // no instruction runs before its next stop (handle_stop)
  t.exit_rip = regs.rip;
  t.exit_result = result;
  if (!syscall_spec(nr)) {
    // rewind's registration, or a number the kernel does not implement (-ENOSYS): the
    // result, and what the recorder wrote at a registration (the turns switch).
    Event e;
    e.kind = EventKind::Syscall;
    e.tid = t.tid;
    e.regs = t.entry;
    e.result = result;
    e.memory = std::move(t.answered_memory);
    t.answered_memory.clear();
    write(e);
    if (!t.library_call && syscall_stop_for_tracer(t, false)) return;
    t.state = RunState::UserRunning;
    return resume_syscall(t);
  }
  if (syscall_has(nr, kExec) && t.exec_seen && result == 0) {
    Event e = capture_exec(t.tid, *saver_, writer_->next_event_data());  // written next
    if (t.exec_former_tid) e.tid = t.exec_former_tid;  // the trace's name for it until now
    write(e);
    end_other_threads(t);
    t.buffer = SyscallBuffer{};    // the new image registers its own
    group(t).counter_fds.clear();  // close-on-exec
    take_new_space(t);
    processes_[t.pid].argv = e.argv;
    release_vfork_parent(t.tid);
    // The kernel drops the debug registers a tracer set (flush_ptrace_hw_breakpoint).
    t.tracer_debug_registers = kTracerDebugRegistersReset;
    if (exec_stops_for_tracer(t)) return;  // ptrace(2), "execve(2) under ptrace"
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
    for (MemoryRegion& m : t.answered_memory) e.memory.push_back(std::move(m));
    t.answered_memory.clear();
    e.written_tid = std::exchange(t.named_tid, 0);
    if (nr != SYS_restart_syscall && result == kErestartRestartblock)
      t.restart_block.emplace(t.entry, t.snap);
    else if (nr != SYS_restart_syscall || !is_restart_result(result))
      t.restart_block.reset();  // kept while restart_syscall is interrupted again
    if (spec->output != OutputKind::None && result > 0 && t.write_target) {
      // One stat of the descriptor's file at the entry tells both where the bytes went.
      const struct stat& st = *t.write_target;
      e.output = output_target(st, int(t.entry.rdi));
      if (on_procfs(t.tid, int(t.entry.rdi), st)) note_proc_mem_write(t, e);
      keep_shared_file_write(t, st, e);
    }
    if (Event::sets_file_size(nr) && result == 0) keep_shared_file_size(t, e);
    keep_shared_file_copy(t, e);
    if (nr == SYS_mmap && result >= 0 && !(t.entry.r10 & MAP_ANONYMOUS)) {
      int fd = int(t.entry.r8);
      std::string source = fd_path(t.tid, fd);
      std::string path = link_target(source);
      if (path.empty()) path = source;
      // A file mapped shared, which processes can change through their mappings or with
      // write(2) under them: its contents now, and its number (replay shares one copy per
      // file). One mapped from a read-only descriptor only up to an amount of data (a large
      // read-only one, such as a database image, is saved as a private mapping's file is,
      // and replay misses writes to it by other processes).
      bool shared = (t.entry.r10 & MAP_SHARED_VALIDATE) != MAP_PRIVATE;
      struct stat st;
      if (shared && (fd_status_flags(t.tid, fd) & O_ACCMODE) != O_RDWR)
        shared =
            ::stat(source.c_str(), &st) == 0 && uint64_t(st.st_blocks) * 512 <= kReadOnlySharedMax;
      if (shared) {
        auto saved = saver_->save_shared(source, path);
        e.file = saved.name;
        e.shared_file = saved.name.empty() ? 0 : saved.number;
        if (e.shared_file) list_shared_file(t, source, e);
      } else {
        e.file = saver_->save(source, path);
      }
    }
    fd_cache_after_syscall(t, nr, *spec, result, e);
    write(e);
    if (t.write_target) release_output(t.tid);  // its bytes are in order now
    join_shared_turns(t, result);               // before the held memory's tasks run again
    release_written_space(t);                   // its bytes are in the trace
    // New code (mmap or mprotect with PROT_EXEC) gets its cpuid replaced, and its rdtsc where
    // the CPU does not trap it (insn_patch.h); the replay does the same after the same event.
    if (syscall_has(nr, kMapsCode) && (t.entry.rdx & PROT_EXEC) && result >= 0)
      patch_emulated_insns(t.tid, nr == SYS_mmap ? uint64_t(result) : t.entry.rdi,
                           (nr == SYS_mmap ? uint64_t(result) : t.entry.rdi) + t.entry.rsi);
  }
  if (RecordTask::TraceeResume r = std::exchange(t.resume_tracee, {}); r.tid) {
    // The tracer's ptrace(PTRACE_CONT...) is in the trace: its tracee goes on now.
    if (auto x = tasks_.find(r.tid); x != tasks_.end() && r.kill) {
      syscall(SYS_tgkill, x->second.pid, x->second.tid, SIGKILL);
      forget_registers();
    } else if (x != tasks_.end()) {
      x->second.tracer_step = r.step;
      x->second.tracer_sysemu = r.sysemu;
      resume_tracee(x->second, r.sig, r.syscalls, pid_seen_by(x->second.tid, t.pid));
    }
  }
  if (t.tracer_step_over_syscall && !t.tracer_stop && t.tracer > 0) {
    // Its tracer single-stepped the syscall instruction: the step ends here (the kernel's
    // trap after the syscall, user_single_step_report); the flag stays for GETSIGINFO.
    t.blocked = false;
    return stop_for_tracer(t, SIGTRAP, TracerStop::Step);
  }
  if (syscall_stop_for_tracer(t, false)) return;  // on when its tracer resumes it
  if (interrupt_stop_after_syscall(t)) return;    // so too
  AddressSpace& g = space(t);
  if (t.blocked) {
    t.blocked = false;
    // Another task runs, or a write waits: it waits for a turn.
    if (g.turns->active || g.turns->held_for_write) {
      t.state = RunState::Stopped;
      t.unrun_since_event = true;
      g.turns->ready.push_back(t.tid);
      return;
    }
    activate(g, t);
  }
  // A write into its memory waits for it.
  if (g.turns->active == t.tid && g.turns->held_for_write) {
    t.state = RunState::Stopped;
    t.unrun_since_event = true;
    g.turns->active = 0;
    g.turns->ready.push_front(t.tid);
    return schedule(g);
  }
  if (g.turns->active == t.tid && t.state == RunState::InSyscall) {
    t.state = RunState::UserRunning;  // a prompt syscall: same slice goes on
    return resume_syscall(t);
  }
  run_user(t);
}

void RecordSession::on_fork_event(RecordTask& t, int event) {
  pid_t child = pid_t(get_event_msg(t.tid));
  // PTRACE_O_TRACEFORK, TRACEVFORK, TRACECLONE: the options are the events' bits (ptrace(2)).
  const bool followed = t.tracer > 0 && (t.tracer_options & (1u << event));
  CloneArgs args = decode_clone_args(t.tid, t.entry);
  Event e;
  e.kind = EventKind::Syscall;
  e.tid = t.tid;
  e.regs = t.entry;
  e.result = child;
  e.child_tid = child;
  // Inside a PID namespace the parent knows the child by another number than rewind does
  // (the child's id at the parent's namespace level), and the child itself by a third when it
  // starts a namespace of its own (pid_namespaces(7)). A child in rewind's namespace has its
  // parent there too: one link read, the usual case, and the numbers agree.
  if (!in_rewinds_pid_namespace(child)) {
    std::vector<pid_t> parent_ids = ns_pids(t.tid), child_ids = ns_pids(child);
    if (!parent_ids.empty() && child_ids.size() >= parent_ids.size()) {
      e.result = child_ids[parent_ids.size() - 1];
      if (child_ids.back() != e.result) e.child_own_tid = child_ids.back();
    }
  }
  if (args.shared_memory_process()) switch_library_off(t, e);
  fd_cache_at_clone(t, args, child, e);
  // A new process (not a thread) on a copy of the memory: memory both may write (MAP_SHARED,
  // System V segments) makes them take turns as threads do, in an order replay can follow.
  const bool new_process = !(event == PTRACE_EVENT_CLONE && args.thread());
  const bool copies_turns =
      new_process && !args.shared_memory_process() && shares_writable_memory(t.pid);
  const int32_t child_turns = turns_at_clone(t, args, child, copies_turns, e);
  write(e);
  t.fork_recorded = true;
  // Replay's copy runs the call at this event: no entry event may come after it. A parent
  // that gave up its turn in the call (it slept) and then stopped for its own tracer's
  // PTRACE_EVENT_CLONE stayed InSyscall and blocked, and the next task to run marked this
  // call's entry again: replay then ran the parent on to its next clone, through buffered
  // calls recorded later (gdb on pthreads, 1 recording in about 120 under load).
  t.entry_marked = true;
  RecordTask& c = tasks_[child];
  c.tid = child;
  c.no_new_privs = t.no_new_privs;      // inherited by clone(2), kept by execve(2)
  c.notif_filtered = t.notif_filtered;  // so are seccomp filters
  // Its real parent (clone(2)): a thread's, and with CLONE_PARENT a child's, is its creator's.
  c.parent_tid = args.thread() || (args.flags & CLONE_PARENT) ? t.parent_tid : t.tid;
  c.pid = event == PTRACE_EVENT_CLONE && args.thread() ? t.pid : child;
  ThreadGroup& cg = groups_[c.pid];
  if (c.pid == child) {  // a copy of (or, vfork, CLONE_VM, the same) memory
    c.buffer = t.buffer;
    cg.tsc_mode = group(t).tsc_mode;  // inherited by fork(2)
    if (args.shared_memory_process()) {
      cg.space = group(t).space;  // one memory: one task of both processes runs at a time
    } else {
      cg.space->buffer_exclusions = space(t).buffer_exclusions;
      cg.space->library_switch = space(t).library_switch;
      cg.space->fd_cache_switch = space(t).fd_cache_switch;
      cg.space->shared_files = space(t).shared_files;
      cg.space->turns_switch = space(t).turns_switch;
      cg.space->turns_value = child_turns;
      cg.space->fd_cache_off = space(t).fd_cache_off || args.splits_fd_table();
      cg.counter_fds = group(t).counter_fds;  // a copy of its fd table, or the same one
      if (copies_turns) cg.space->turns = space(t).turns;
    }
  }
  cg.members.push_back(child);
  AddressSpace& cs = *cg.space;
  cs.tasks.push_back(child);
  if (turn_task_count(cs) == 2 && cs.turns->active) {
    // Competition starts now: the running task's time slice starts now too.
    start_slice(tasks_.at(cs.turns->active));
  }
  if (c.pid == child) {
    processes_[child] = ProcessInfo{child, t.pid, false, 0, processes_[t.pid].argv};
    process_order_.push_back(child);
  }
  update_timer();
  if (followed) {
    // Its tracer traces the new task too, with the same options; a seized one stops before
    // it runs (on_event_stop), another gets SIGSTOP (ptrace(2), PTRACE_O_TRACEFORK).
    c.tracer = t.tracer;
    c.tid_for_tracer = pid_seen_by(t.tracer, child);
    c.tracer_options = t.tracer_options;
    c.tracer_seized = t.tracer_seized;
    c.stop_at_start = true;
    if (!c.tracer_seized) {
      put_off_signal(c, SIGSTOP, make_siginfo(SIGSTOP, SI_USER, 0, 0, 0));
      send_put_off(c);
    }
    // PTRACE_GETEVENTMSG: its pid in the tracer's PID namespace (kernel/ptrace.c
    // ptrace_event_pid).
    t.tracer_event_msg = uint64_t(c.tid_for_tracer);
  }
  if (event == PTRACE_EVENT_VFORK) {
    // The parent cannot run before the child execs or exits; holding it here keeps the
    // child's events before the parent's in the trace, as replay needs. Its event stop for
    // its tracer waits as well (natively its tracer may see it that late).
    t.vfork_child = child;
    t.vfork_event_pending = followed;
    // The child takes turns with it when the memory they share has MAP_SHARED pages that
    // forked processes share too (a multiprocessing pool's semaphores): held, the parent
    // runs no code, and its turn goes, or the child would wait for a parent that waits for
    // the child. It waits for a turn again as the vfork returns (on_syscall_exit). Otherwise
    // it keeps its turn: its other threads wait as well, as none could take turns with the
    // child, which runs on their memory.
    if (AddressSpace& ps = space(t); cs.turns == ps.turns && ps.turns->active == t.tid) {
      wait_outside_turns(t);
      t.entry_marked = true;  // replay's copy is in the vfork already: its event is the fork's
      schedule(ps);
    }
  } else if (followed) {
    stop_for_tracer(t, SIGTRAP, TracerStop::NewTask, event);
  } else {
    resume_syscall(t);
  }
  if (auto it = early_stops_.find(child); it != early_stops_.end()) {
    int st = it->second;
    early_stops_.erase(it);
    handle_stop(c, st);
  }
}

void RecordSession::note_library_switch(RecordTask& t, uint64_t buffer) {
  // The library's own int (in its .bss, which may lie past its file's pages): the
  // registration came from its code (on_syscall_entry checks), so its word is taken. An
  // unreadable header: the library is never turned off, nor could it have announced one.
  if (uint64_t at = library_switch_at(t.tid, buffer)) space(t).library_switch = at;
}

void RecordSession::switch_library_off(RecordTask& t, Event& e) {
  uint64_t at = space(t).library_switch;
  if (!at) return;  // no library, or one too old to say where its switch is
  if (auto m = write_library_switch(t.tid, at, 0)) e.memory.push_back(std::move(*m));
}

OutputStream RecordSession::output_target(const struct stat& st, int fd) const {
  bool out = stdout_st_ && same_file(st, *stdout_st_);
  bool err = stderr_st_ && same_file(st, *stderr_st_);
  if (out && err) return fd == 2 ? OutputStream::Stderr : OutputStream::Stdout;
  return out ? OutputStream::Stdout : err ? OutputStream::Stderr : OutputStream::None;
}

}  // namespace rwd
