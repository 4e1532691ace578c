// ptrace(2) made by the recorded program. rewind is the real tracer of every recorded task, so
// the kernel would refuse the program's own requests (EPERM for PTRACE_TRACEME): the recorder
// answers them instead, as the kernel would answer them natively, and keeps who traces whom
// and which tracee stands in a stop (rr emulates ptrace between its tracees the same way).
// Each answer is the syscall's recorded result and memory, which replay gives back like any
// emulated syscall's.
//
// Emulated: PTRACE_TRACEME (a program checking that no debugger traces it, a child asking its
// parent to trace it), PTRACE_SEIZE and PTRACE_ATTACH of any recorded process (strace's start,
// a crash reporter's helper attaching to its parent); a tracee's stops at a signal, in a
// group-stop, after execve and at its exit, which its tracer's wait4 and waitid report
// (tracer_stops.cpp, group_stops.cpp); PTRACE_CONT, PTRACE_SYSCALL and PTRACE_DETACH with or
// without a signal, PTRACE_KILL, PTRACE_LISTEN, and PTRACE_INTERRUPT (of a running tracee:
// tracer_interrupts.cpp); the reads of a stopped tracee (PTRACE_PEEK*, PTRACE_GET{REGS,
// FPREGS,REGSET,SIGINFO,EVENTMSG}, PTRACE_GET_SYSCALL_INFO), PTRACE_SETSIGINFO,
// PTRACE_SETOPTIONS; the writes (PTRACE_POKE*, PTRACE_SET{REGS,FPREGS,REGSET}) where replay's
// copy stands too (an event of the tracee is written at a stop between its events); syscall
// stops, the tracee's preload library turned off so that every syscall stops (an entry stop
// writes a SyscallEntry event, which brings replay's copy there); the event stops of
// PTRACE_O_TRACEEXEC, TRACEEXIT, TRACEFORK, TRACEVFORK and TRACECLONE, a followed task's new
// tasks traced by the same tracer, and TRACEVFORKDONE; PTRACE_SINGLESTEP (a real step, whose
// SIGTRAP is a point: step_for_tracer, or the recorder's emulation of rdtsc and cpuid; from a
// syscall's entry stop, the call and a stop after it); the debug registers
// (tracer_debug_registers.cpp); PTRACE_SYSEMU and PTRACE_SYSEMU_SINGLESTEP (the call stops at its
// entry and is skipped, its result the tracer's rax); seccomp stops (PTRACE_O_TRACESECCOMP:
// program_filter.cpp). A tracer inside a PID namespace names tasks, and is told of them, by that
// namespace's numbers (recorded_task_named, pid_seen_by). Not yet, each stopping the recording with
// one line: stepping a syscall that forks or execs, and PTRACE_O_SUSPEND_SECCOMP.
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "engine/arch/insn.h"
#include "engine/arch/signal_names.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"
#include "engine/os/tracee_writes.h"
#include "engine/record/record_session.h"
#include "engine/record/signal_disposition.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

/// The requests named in messages (<sys/ptrace.h>); others are named by number.
constexpr std::array<std::pair<long, const char*>, 25> kRequestNames{{
    {PTRACE_TRACEME, "PTRACE_TRACEME"},
    {PTRACE_PEEKTEXT, "PTRACE_PEEKTEXT"},
    {PTRACE_PEEKDATA, "PTRACE_PEEKDATA"},
    {PTRACE_PEEKUSER, "PTRACE_PEEKUSER"},
    {PTRACE_POKETEXT, "PTRACE_POKETEXT"},
    {PTRACE_POKEDATA, "PTRACE_POKEDATA"},
    {PTRACE_POKEUSER, "PTRACE_POKEUSER"},
    {PTRACE_CONT, "PTRACE_CONT"},
    {PTRACE_KILL, "PTRACE_KILL"},
    {PTRACE_SINGLESTEP, "PTRACE_SINGLESTEP"},
    {PTRACE_GETREGS, "PTRACE_GETREGS"},
    {PTRACE_SETREGS, "PTRACE_SETREGS"},
    {PTRACE_ATTACH, "PTRACE_ATTACH"},
    {PTRACE_DETACH, "PTRACE_DETACH"},
    {PTRACE_SYSCALL, "PTRACE_SYSCALL"},
    {PTRACE_SYSEMU, "PTRACE_SYSEMU"},
    {PTRACE_SYSEMU_SINGLESTEP, "PTRACE_SYSEMU_SINGLESTEP"},
    {PTRACE_SETOPTIONS, "PTRACE_SETOPTIONS"},
    {PTRACE_GETEVENTMSG, "PTRACE_GETEVENTMSG"},
    {PTRACE_GETSIGINFO, "PTRACE_GETSIGINFO"},
    {PTRACE_GETREGSET, "PTRACE_GETREGSET"},
    {PTRACE_SEIZE, "PTRACE_SEIZE"},
    {PTRACE_INTERRUPT, "PTRACE_INTERRUPT"},
    {PTRACE_LISTEN, "PTRACE_LISTEN"},
    {PTRACE_GET_SYSCALL_INFO, "PTRACE_GET_SYSCALL_INFO"},
}};

std::string request_name(long request) {
  for (const auto& [r, name] : kRequestNames)
    if (r == request) return name;
  return "request " + std::to_string(request);
}

/// How messages name a TracerStop ("a tracee stopped ..."), in the enum's order.
constexpr std::array<const char*, 11> kStopNames{
    "by a signal",         "by a fault",          "after its execve",    "at a syscall's entry",
    "at a syscall's exit", "in a group-stop",     "by PTRACE_INTERRUPT", "at its exit",
    "at a fork event",     "after a single step", "at a seccomp stop"};
static_assert(size_t(TracerStop::Seccomp) + 1 == kStopNames.size(), "a name for each TracerStop");

std::string tracer_stop_name(TracerStop kind) {
  return kStopNames[size_t(kind)];
}

/// Whether a process or thread numbered `tid` exists on the machine (in rewind's PID
/// namespace, which is the program's: the caller checks).
bool task_exists(pid_t tid) {
  struct stat st;
  return tid > 0 && ::stat(("/proc/" + std::to_string(tid)).c_str(), &st) == 0;
}

}  // namespace

pid_t RecordSession::recorded_task_named(pid_t viewer, pid_t number) {
  if (number <= 0 || in_rewinds_pid_namespace(viewer)) return number;
  for (const auto& [tid, x] : tasks_)
    if (pid_seen_by(viewer, tid) == number) return tid;
  return 0;
}

void RecordSession::on_ptrace_entry(RecordTask& t) {
  const long request = long(t.entry.rdi);
  if (request == PTRACE_TRACEME) {
    // kernel/ptrace.c ptrace_traceme: EPERM when already traced, else the real parent is the
    // tracer. The parent thread may have ended: the parent is then another thread of its
    // process, or a process outside the recording (a subreaper, init).
    if (t.tracer != 0) return answer_syscall(t, -EPERM);
    pid_t parent = t.parent_tid;
    if (parent && !tasks_.count(parent)) {
      // That thread ended: another thread of its process adopted its children (kernel/exit.c
      // find_new_reaper), or, when none is left, a reaper outside the recording.
      parent = 0;
      if (auto info = processes_.find(t.pid); info != processes_.end())
        for (const auto& [tid, task] : tasks_)
          if (task.pid == info->second.ppid) {
            parent = tid;
            break;
          }
    }
    t.tracer = parent ? parent : kTracerOutside;
    t.tid_for_tracer = parent ? pid_seen_by(parent, t.tid) : 0;
    return answer_syscall(t, 0);
  }
  const std::string name = "ptrace(" + request_name(request) + ")";
  // The tracer names its tracee in its own PID namespace; the event keeps rewind's number for
  // replay where the two differ.
  const pid_t number = pid_t(t.entry.rsi);
  const pid_t target = recorded_task_named(t.tid, number);
  if (target != number) t.named_tid = target;
  auto traced = tasks_.find(target);
  if (request == PTRACE_ATTACH || request == PTRACE_SEIZE) {
    if (traced != tasks_.end() && traced->second.pid == t.pid)
      return answer_syscall(t, -EPERM);  // its own process (ptrace_attach: same_thread_group)
    if (traced != tasks_.end()) return attach(t, traced->second, request == PTRACE_SEIZE);
    if (task_exists(target))
      throw UnsupportedError(name + " of process " + std::to_string(target) +
                             ", outside the recording, cannot be recorded");
    return answer_syscall(t, -ESRCH);
  }
  // Every other request needs a tracee of this very thread (ptrace_check_attach), stopped
  // but for PTRACE_KILL and PTRACE_INTERRUPT (which only a PTRACE_SEIZE tracee takes: EIO).
  if (traced == tasks_.end() || traced->second.tracer != t.tid) return answer_syscall(t, -ESRCH);
  RecordTask& tracee = traced->second;
  if (request == PTRACE_INTERRUPT) {
    if (!tracee.tracer_seized) return answer_syscall(t, -EIO);
    answer_syscall(t, 0);
    // In a stop already, it stops no further (kernel/ptrace.c: JOBCTL_TRAP_STOP stands).
    if (tracee.tracer_stop) return;
    if (!tracee.tracer_listening) return interrupt_for_tracer(tracee);
    // Out of its PTRACE_LISTEN: stopped again, with its group-stop's signal if that goes on.
    end_listen(tracee);
    return stop_for_tracer(tracee, tracee.group_stop ? tracee.group_stop : SIGTRAP,
                           TracerStop::Interrupt, PTRACE_EVENT_STOP);
  }
  if (request == PTRACE_KILL) {
    // Since Linux 5.x a SIGKILL, like kill(2)'s: the tracee's end is recorded when it comes,
    // after this call's event (on_syscall_exit sends it).
    t.resume_tracee = {tracee.tid, 0, false, true};
    return answer_syscall(t, 0);
  }
  if (!tracee.tracer_stop) return answer_syscall(t, -ESRCH);
  const TracerStop kind = tracee.tracer_stop_kind;
  const uint64_t addr = t.entry.rdx, data = t.entry.r10;
  // Copies an answer into the tracer's memory at `at`, where its event keeps it: 0, or EFAULT
  // where it cannot be written. `give` copies it to `data`, where most requests want it.
  auto give_at = [&](uint64_t at, const void* bytes, size_t n) -> int64_t {
    try {
      write_memory(t.tid, at, bytes, n);
    } catch (const SystemError&) {
      return -EFAULT;
    }
    MemoryRegion m;
    m.addr = at;
    m.bytes.assign(static_cast<const uint8_t*>(bytes), static_cast<const uint8_t*>(bytes) + n);
    t.answered_memory.push_back(std::move(m));
    return 0;
  };
  auto give = [&](const void* bytes, size_t n) { return give_at(data, bytes, n); };
  switch (request) {
    case PTRACE_CONT:
    case PTRACE_SYSCALL:
    case PTRACE_SINGLESTEP:
    case PTRACE_SYSEMU:
    case PTRACE_SYSEMU_SINGLESTEP:
    case PTRACE_DETACH: {
      const int sig = int(data);
      if (sig < 0 || sig > 64) return answer_syscall(t, -EIO);
      // From a fault's stop, without its signal the instruction runs again, or what the
      // tracer put in its place (ptrace(2): the signal is suppressed); another signal
      // replaces it (resume_tracee).
      // After a step over a syscall the tracee stands in the recorder's syscall-exit stop,
      // with no SIGTRAP queued to pass on.
      if (sig && kind == TracerStop::Step && tracee.tracer_step_over_syscall)
        throw UnsupportedError(name +
                               " with a signal after a single step over a syscall is not "
                               "supported yet");
      const bool sysemu = request == PTRACE_SYSEMU || request == PTRACE_SYSEMU_SINGLESTEP;
      bool step = request == PTRACE_SINGLESTEP || request == PTRACE_SYSEMU_SINGLESTEP;
      bool syscalls = request == PTRACE_SYSCALL || request == PTRACE_SYSEMU;
      tracee.tracer_step_over_syscall = step && check_single_step(tracee, request, sig, name);
      if (request == PTRACE_SYSEMU_SINGLESTEP && tracee.tracer_step_over_syscall) {
        // A step onto a `syscall`: the call's entry stop ends it, and the call is skipped
        // (kernel/entry/common.c: SYSCALL_EMU, no step report after it).
        tracee.tracer_step_over_syscall = step = false;
        syscalls = true;
      }
      tracee.tracer_step_emulated = false;
      if (turns_library_off(request) && tracee.buffer.addr &&
          !library_off_at(tracee.tid, tracee.buffer.addr)) {
        // Its tracer must see every syscall: the preload library goes off in its memory, at
        // the same point in replay (replay_ptrace), which needs no code of it run since its
        // last event: so at an event, or in a group-stop (no handler ran).
        if (!tracee.tracer_stop_at_event && kind != TracerStop::Group &&
            kind != TracerStop::Interrupt)
          throw UnsupportedError(name + " of a tracee stopped " + tracer_stop_name(kind) +
                                 " between its events, whose "
                                 "syscalls rewind buffers, is not supported yet");
        if (!switch_library_off_at(tracee.tid, tracee.buffer.addr))
          throw UnsupportedError(name +
                                 " of a task whose preload library cannot be turned "
                                 "off is not supported yet (rewind record --no-syscall-buffer "
                                 "records it)");
      }
      answer_syscall(t, 0);
      if (request == PTRACE_DETACH) {
        untrace(tracee);
        // Detached in a group-stop that goes on, it stays stopped (__ptrace_detach).
        if (hold_group_stop(tracee)) return;
      }
      // Resumed once this call's event is written (on_syscall_exit): the tracee's next
      // events come after it in the trace, as replay needs them (the writes before it).
      t.resume_tracee = {tracee.tid, sig, syscalls, false, step, sysemu};
      return;
    }
    case PTRACE_PEEKTEXT:
    case PTRACE_PEEKDATA:
    case PTRACE_PEEKUSER: {
      if (int dr = debug_register_at(addr); request == PTRACE_PEEKUSER && dr >= 0)
        return answer_syscall(t, give(&tracee.tracer_debug_registers[size_t(dr)], 8));
      // The word is read from the tracee as it stands (rewind is its real tracer); the raw
      // syscall stores it at `data` (ptrace(2), "C library/kernel differences").
      errno = 0;
      long word = ptrace(__ptrace_request(request), tracee.tid, addr, nullptr);
      if (errno) return answer_syscall(t, -errno);
      return answer_syscall(t, give(&word, sizeof word));
    }
    case PTRACE_GETREGS: {
      user_regs_struct r;
      if (ptrace(PTRACE_GETREGS, tracee.tid, nullptr, &r) != 0) return answer_syscall(t, -errno);
      return answer_syscall(t, give(&r, sizeof r));
    }
    case PTRACE_GETFPREGS: {
      user_fpregs_struct r;
      if (ptrace(PTRACE_GETFPREGS, tracee.tid, nullptr, &r) != 0) return answer_syscall(t, -errno);
      return answer_syscall(t, give(&r, sizeof r));
    }
    case PTRACE_GETSIGINFO: {
      // After execve no signal stands queued: the kernel's would be its SIGTRAP, sent by the
      // tracee itself (fs/exec.c: send_sig with no siginfo, SI_USER).
      // A syscall stop's is the tracee's own report (kernel/ptrace.c ptrace_do_notify).
      // A PTRACE_EVENT stop's is the tracee's own report of it (ptrace_do_notify); a
      // group-stop of a tracee that was not seized has none (ptrace(2): EINVAL).
      if (kind == TracerStop::Group && !tracee.tracer_seized) return answer_syscall(t, -EINVAL);
      if (kind == TracerStop::Step &&
          (tracee.tracer_step_over_syscall || tracee.tracer_step_emulated)) {
        // After a syscall, arch/x86/kernel/step.c user_single_step_report: TRAP_BRKPT; after
        // an instruction, the trap flag's (arch/x86/kernel/traps.c exc_debug_user:
        // TRAP_TRACE); si_addr the pc in both.
        SigInfo si =
            make_siginfo(SIGTRAP, tracee.tracer_step_emulated ? TRAP_TRACE : TRAP_BRKPT, 0, 0, 0);
        const uint64_t pc = get_regs(tracee.tid).rip;
        std::memcpy(si.data() + 16, &pc, sizeof pc);
        return answer_syscall(t, give(si.data(), si.size()));
      }
      // The kernel fills si_pid in the tracee's own PID namespace (task_pid_vnr).
      const pid_t own_tid = pid_seen_by(tracee.tid, tracee.tid),
                  own_pid = pid_seen_by(tracee.tid, tracee.pid);
      SigInfo si =
          tracee.tracer_event
              ? make_siginfo(tracee.tracer_stop, tracee.tracer_stop | (tracee.tracer_event << 8),
                             own_tid, task_real_uid(tracee.tid), 0)
          : kind == TracerStop::Exec
              ? make_siginfo(SIGTRAP, SI_USER, own_pid, task_real_uid(tracee.tid), 0)
          : kind == TracerStop::SyscallEntry || kind == TracerStop::SyscallExit
              ? make_siginfo(SIGTRAP, tracee.tracer_stop, own_pid, task_real_uid(tracee.tid), 0)
              : get_siginfo(tracee.tid);
      return answer_syscall(t, give(si.data(), si.size()));
    }
    case PTRACE_GETREGSET: {
      struct iovec io;
      try {
        read_memory_exact(t.tid, data, &io, sizeof io);
      } catch (const SystemError&) {
        return answer_syscall(t, -EFAULT);
      }
      std::vector<uint8_t> set(std::min<uint64_t>(io.iov_len, kMaxRegsetBytes));
      struct iovec mine = {set.data(), set.size()};
      if (ptrace(PTRACE_GETREGSET, tracee.tid, addr, &mine) != 0) return answer_syscall(t, -errno);
      // The set, then the length the kernel wrote back into the iovec (ptrace(2)).
      int64_t r = give_at(uint64_t(io.iov_base), set.data(), mine.iov_len);
      io.iov_len = mine.iov_len;
      if (r == 0) r = give(&io, sizeof io);
      return answer_syscall(t, r);
    }
    case PTRACE_SETOPTIONS:
      return answer_syscall(t, set_tracer_options(tracee, data, name));
    case PTRACE_LISTEN: {
      // Only at a seized tracee's PTRACE_EVENT_STOP (kernel/ptrace.c); out of its stop, it
      // waits for the end of its group-stop, then stops again.
      if (!tracee.tracer_seized || tracee.tracer_event != PTRACE_EVENT_STOP)
        return answer_syscall(t, -EIO);
      answer_syscall(t, 0);
      if (tracee.group_stop && group_stop_over(tracee)) {
        // SIGCONT came meanwhile: it stops again at once (JOBCTL_TRAP_NOTIFY).
        tracee.group_stop = 0;
        return stop_for_tracer(tracee, SIGTRAP, TracerStop::Interrupt, PTRACE_EVENT_STOP);
      }
      if (!start_listening(tracee))
        throw SystemError("ptrace(PTRACE_LISTEN) of task " + std::to_string(tracee.tid), errno);
      tracee.tracer_listening = true;
      return;
    }
    case PTRACE_GETEVENTMSG:
      return answer_syscall(t, give(&tracee.tracer_event_msg, sizeof tracee.tracer_event_msg));
    case PTRACE_GET_SYSCALL_INFO: {
      // struct ptrace_syscall_info (<linux/ptrace.h>); the kernel returns the size of what
      // the stop fills in and copies as much of it as `addr` bytes hold.
      struct {
        uint8_t op;
        uint8_t pad[3];
        uint32_t arch;
        uint64_t ip, sp;
        uint64_t words[7];  // entry: nr, args[6]; exit: rval, is_error (a byte)
        uint32_t ret_data;  // seccomp: nr, args[6], then SECCOMP_RET_DATA
        uint32_t pad2;
      } info{};
      Registers now = get_regs(tracee.tid);
      info.arch = 0xc000003e;  // AUDIT_ARCH_X86_64
      info.ip = now.rip;
      info.sp = now.rsp;
      size_t size = offsetof(decltype(info), arch);
      if (tracee.tracer_stop_kind == TracerStop::SyscallEntry ||
          tracee.tracer_stop_kind == TracerStop::Seccomp) {
        const bool seccomp = tracee.tracer_stop_kind == TracerStop::Seccomp;
        info.op = seccomp ? 3 : 1;  // PTRACE_SYSCALL_INFO_SECCOMP, PTRACE_SYSCALL_INFO_ENTRY
        const uint64_t entry[7] = {now.orig_rax, now.rdi, now.rsi, now.rdx,
                                   now.r10,      now.r8,  now.r9};
        std::memcpy(info.words, entry, sizeof entry);
        size = offsetof(decltype(info), words) + sizeof entry;
        if (seccomp) {
          info.ret_data = uint32_t(tracee.tracer_event_msg);
          size = offsetof(decltype(info), ret_data) + sizeof info.ret_data;
        }
      } else if (tracee.tracer_stop_kind == TracerStop::SyscallExit) {
        info.op = 2;  // PTRACE_SYSCALL_INFO_EXIT
        info.words[0] = now.rax;
        info.words[1] = syscall_failed(int64_t(now.rax));
        size = offsetof(decltype(info), words) + 8 + 1;
      }
      int64_t r = give(&info, std::min<uint64_t>(size, addr));
      return answer_syscall(t, r == 0 ? int64_t(size) : r);
    }
    case PTRACE_SETSIGINFO: {
      // The siginfo the signal it stopped for is delivered with, if its tracer passes it on.
      if (kind != TracerStop::Signal && kind != TracerStop::Fault)
        throw UnsupportedError(name + " at a stop with no signal is not supported yet");
      SigInfo si;
      try {
        read_memory_exact(t.tid, data, si.data(), si.size());
      } catch (const SystemError&) {
        return answer_syscall(t, -EFAULT);
      }
      set_siginfo(tracee.tid, si);
      return answer_syscall(t, 0);
    }
    default:
      if (int dr = debug_register_at(addr); request == PTRACE_POKEUSER && dr >= 0)
        return answer_syscall(t, debug_register_write(tracee, dr, data, name));
      if (!is_tracee_write(request))
        throw UnsupportedError(name + " of a stopped tracee is not supported yet");
      // Without a filter of rewind's, the recorder took the call before the kernel's seccomp
      // stop: a change of it would come too late.
      if (tracee.tracer_stop_kind == TracerStop::Seccomp && tracee.seccomp_stop_inside)
        throw UnsupportedError(name +
                               " at a seccomp stop, with --no-syscall-buffer, is not "
                               "supported yet");
      // Replay makes the same write on its copy of the tracee, which stands where the tracee
      // stopped only when that is where its last event left it.
      if (!tracee.tracer_stop_at_event)
        throw UnsupportedError(name + " of a tracee stopped by " +
                               (tracee.tracer_stop_kind == TracerStop::Fault
                                    ? "a fault"
                                    : "a signal between its events") +
                               " is not supported yet");
      uint64_t regset_len = 0;
      int64_t r = apply_tracee_write(t.tid, tracee.tid, request, addr, data, &regset_len);
      if (r == 0 && request == PTRACE_SETREGSET) {
        // The kernel writes the length it took back into the iovec (ptrace(2)).
        struct iovec io;
        read_memory_exact(t.tid, data, &io, sizeof io);
        io.iov_len = regset_len;
        r = give(&io, sizeof io);
      }
      return answer_syscall(t, r);
  }
}

bool RecordSession::check_single_step(const RecordTask& tracee, long request, int sig,
                                      const std::string& name) {
  const TracerStop kind = tracee.tracer_stop_kind;
  const bool syscall_stop = kind == TracerStop::SyscallEntry || kind == TracerStop::SyscallExit;
  // From a stop in user code, or a syscall stop (gdb's `stepi` after `catch syscall`); another
  // stop inside the kernel (an event's, a seccomp stop) would step out of it, which the
  // recorder must see.
  if (kind != TracerStop::Fault && kind != TracerStop::Signal && kind != TracerStop::Step &&
      !syscall_stop)
    throw UnsupportedError(name + " of a tracee stopped " + tracer_stop_name(kind) +
                           " is not supported yet");
  // At a syscall stop the kernel sends a signal as a new one (resume_tracee), whose stop the
  // step would have to meet.
  if (syscall_stop && sig)
    throw UnsupportedError(name + " with a signal from a syscall stop is not supported yet");
  if (syscall_stop && request == PTRACE_SYSEMU_SINGLESTEP)
    throw UnsupportedError(name + " from a syscall stop is not supported yet");
  if (kind == TracerStop::SyscallEntry) {
    // The call runs (its number as the tracer left it) and the step ends right after it: the
    // kernel's trap at the syscall's exit (kernel/entry/common.c report_single_step), as for a
    // step over the `syscall` instruction. Not one that makes a task or replaces its image.
    const long nr = long(get_regs(tracee.tid).orig_rax);
    if (syscall_has(nr, kForkLike) || syscall_has(nr, kExec))
      throw UnsupportedError(name + " from the entry of " + syscall_name(nr) +
                             " is not supported yet");
    return true;
  }
  // From a syscall's exit stop the step runs the program's next instruction, as from user code.
  if (sig != 0) {
    // With a signal that has a handler, the delivery is the step: it stops at the handler's
    // first instruction, none of the program's run (kernel/signal.c signal_delivered,
    // ptrace_notify). An ignored one is dropped and the instruction runs; one that ends the
    // task ends it.
    if (signal_is_caught(tracee.tid, sig)) return false;
    if (!signal_is_ignored(tracee.tid, sig) && !default_action_ends(sig))
      throw UnsupportedError(name + " with a stop signal is not supported yet");
  }
  // Instructions the recorder must see run: they enter the kernel (a syscall stepped would go
  // unrecorded) or the recorder emulates them (rdtsc under PR_SET_TSC, cpuid).
  const Registers regs = get_regs(tracee.tid);
  std::vector<uint8_t> code = read_memory(tracee.tid, regs.rip, 16);
  const size_t i = insn_prefix_length(code.data(), code.size());
  const char* entry = syscall_insn_name(code.data() + i, code.size() - i);
  if (entry && std::string(entry) == "syscall") {
    // A syscall: run as any traced syscall, and the step's SIGTRAP comes after its event
    // (on_syscall_exit); an exit's step ends with the task's end, an rt_sigreturn's where
    // the signal frame returns to, as natively. Not the preload library's untraced one (it
    // makes no stop), nor one that makes a task or replaces its image.
    const long nr = long(regs.rax);
    const bool untraced = (regs.rip & ~uint64_t(0xfff)) == RWD_UNTRACED_PAGE;
    if (untraced || syscall_has(nr, kForkLike) || syscall_has(nr, kExec))
      throw UnsupportedError(
          name + " of a `syscall` instruction (" +
          (untraced ? std::string("the preload library's untraced one") : syscall_name(nr)) +
          ") is not supported yet");
    return true;
  }
  // Another way into the kernel (int 0x80, sysenter) would go unrecorded. An instruction the
  // recorder emulates (rdtsc, cpuid) is emulated as the step (step_for_tracer).
  if (entry)
    throw UnsupportedError(name + " of a `" + entry + "` instruction is not supported yet");
  return false;
}

int64_t RecordSession::set_tracer_options(RecordTask& tracee, uint64_t options,
                                          const std::string& name) {
  // PTRACE_O_MASK (<linux/ptrace.h>): others are EINVAL (ptrace_setoptions).
  constexpr uint64_t kAll = 0x003000ff;
  if (options & ~kAll) return -EINVAL;
  // Not emulated: suspending the tracee's seccomp filters (a checkpointing tool's).
  constexpr uint64_t kKnown = PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC |
                              PTRACE_O_TRACEEXIT | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                              PTRACE_O_TRACECLONE | PTRACE_O_TRACEVFORKDONE | PTRACE_O_TRACESECCOMP;
  if (options & ~kKnown)
    throw UnsupportedError(name + " with PTRACE_O_SUSPEND_SECCOMP is not supported yet");
  tracee.tracer_options = options;
  return 0;
}

void RecordSession::attach(RecordTask& t, RecordTask& tracee, bool seize) {
  // kernel/ptrace.c ptrace_attach: EIO for a PTRACE_SEIZE with an address, EPERM for a task
  // traced already.
  const std::string name = seize ? "ptrace(PTRACE_SEIZE)" : "ptrace(PTRACE_ATTACH)";
  if (seize && t.entry.rdx != 0) return answer_syscall(t, -EIO);
  if (tracee.tracer != 0) return answer_syscall(t, -EPERM);
  // Its stop may be in the kernel still, unseen: the tracer saw its group-stop (wait(2)
  // WUNTRACED) as soon as the kernel made it. It is handled first.
  const pid_t tid = tracee.tid;
  take_pending_stop(tracee);
  if (!tasks_.count(tid)) return answer_syscall(t, -EPERM);  // it ended (ptrace_attach)
  // A tracer that is not the parent (a crash reporter's helper attached to its own parent, a
  // sibling) is told of its tracee's stops and end by its waits (report_exit_to_tracer). The
  // parent, told by the kernel (rewind being the real tracer), may learn of the end before
  // the tracer has reaped it, which natively it cannot.
  if (seize) {
    if (int64_t r = set_tracer_options(tracee, t.entry.r10, name); r != 0)
      return answer_syscall(t, r);
  }
  tracee.tracer = t.tid;
  tracee.tid_for_tracer = pid_seen_by(t.tid, tid);
  tracee.tracer_seized = seize;
  answer_syscall(t, 0);
  if (!seize) {
    // PTRACE_ATTACH sends it SIGSTOP, which stops it for its tracer (ptrace(2)). A task in a
    // group-stop stops for its tracer at once, reporting the group-stop's signal, and the
    // SIGSTOP waits until the tracer resumes it (kernel/ptrace.c ptrace_attach:
    // JOBCTL_TRAP_STOP; kernel/signal.c do_jobctl_trap). The real task leaves its
    // PTRACE_LISTEN first, so that the signal waits in its ptrace stop.
    if (tracee.group_stop) end_listen(tracee);
    put_off_signal(tracee, SIGSTOP, make_siginfo(SIGSTOP, SI_KERNEL, 0, 0, 0));
    send_put_off(tracee);
    if (tracee.group_stop) stop_for_tracer(tracee, tracee.group_stop, TracerStop::Group, 0);
    return;
  }
  if (tracee.group_stop) {
    // In a group-stop it stops for its tracer at once (ptrace_attach: JOBCTL_TRAP_STOP).
    end_listen(tracee);
    if (tracee.group_stop)
      stop_for_tracer(tracee, tracee.group_stop, TracerStop::Group, PTRACE_EVENT_STOP);
    else  // SIGCONT came first: an interrupt stop (kernel/signal.c do_jobctl_trap)
      stop_for_tracer(tracee, SIGTRAP, TracerStop::Interrupt, PTRACE_EVENT_STOP);
  }
}

}  // namespace rwd
