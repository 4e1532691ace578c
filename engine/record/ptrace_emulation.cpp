// ptrace(2) made by the recorded program. rewind is the real tracer of every recorded task, so
// the kernel would refuse the program's own requests (EPERM for PTRACE_TRACEME): the recorder
// answers them instead, as the kernel would answer them natively, and keeps who traces whom
// and which tracee stands in a stop (rr emulates ptrace between its tracees the same way).
// Each answer is the syscall's recorded result and memory, which replay gives back like any
// emulated syscall's.
//
// Emulated: PTRACE_TRACEME (a program checking that no debugger traces it, a child asking its
// parent to trace it); a tracee's stops at a signal and after execve, which its tracer's
// wait4 and waitid report; PTRACE_CONT and PTRACE_DETACH with or without a signal,
// PTRACE_KILL, the reads of a stopped tracee (PTRACE_PEEK*, PTRACE_GET{REGS,FPREGS,REGSET,
// SIGINFO}), PTRACE_SETSIGINFO, PTRACE_SETOPTIONS with PTRACE_O_TRACESYSGOOD and
// PTRACE_O_EXITKILL, the writes (PTRACE_POKE*, PTRACE_SET{REGS,FPREGS,REGSET}) at a stop
// where the tracee's last event left it (replay makes them again there), and syscall stops
// (PTRACE_SYSCALL, PTRACE_GET_SYSCALL_INFO; the tracee's preload library turned off, so
// that every syscall stops): an entry stop writes a SyscallEntry event, which brings
// replay's copy there. Not yet, each stopping the recording with one line: attaching to a
// recorded task, writes at a stop between events (a fault, another task's signal: replay
// does not stop its copy there), single steps.
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

#include "engine/arch/signal_names.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/tracee_memory.h"
#include "engine/os/tracee_writes.h"
#include "engine/record/record_session.h"
#include "engine/record/signal_disposition.h"

namespace rwd {

namespace {

/// The requests named in messages (<sys/ptrace.h>); others are named by number.
constexpr std::array<std::pair<long, const char*>, 22> kRequestNames{{
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
    {PTRACE_SETOPTIONS, "PTRACE_SETOPTIONS"},
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

/// Whether a process or thread numbered `tid` exists on the machine (in rewind's PID
/// namespace, which is the program's: the caller checks).
bool task_exists(pid_t tid) {
  struct stat st;
  return tid > 0 && ::stat(("/proc/" + std::to_string(tid)).c_str(), &st) == 0;
}

/// Whether `sig` delivered to `tid` would stop its process (signal(7): SIGSTOP always, SIGTSTP,
/// SIGTTIN and SIGTTOU by their default action).
bool stops_the_process(pid_t tid, int sig) {
  if (sig == SIGSTOP) return true;
  if (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU) return false;
  ProcSignals s = read_proc_signals(tid);
  const uint64_t bit = 1ull << (sig - 1);
  return !(s.caught & bit) && !(s.ignored & bit);
}

}  // namespace

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
    return answer_syscall(t, 0);
  }
  const std::string name = "ptrace(" + request_name(request) + ")";
  if (!in_rewinds_pid_namespace(t.tid))
    throw UnsupportedError(name + " inside a PID namespace (CLONE_NEWPID) is not supported yet");
  const pid_t target = pid_t(t.entry.rsi);
  auto traced = tasks_.find(target);
  if (request == PTRACE_ATTACH || request == PTRACE_SEIZE) {
    if (traced != tasks_.end() && traced->second.pid == t.pid)
      return answer_syscall(t, -EPERM);  // its own process (ptrace_attach: same_thread_group)
    if (traced != tasks_.end())
      throw UnsupportedError(name + " of a recorded task (" + std::to_string(target) +
                             ") is not supported yet");
    if (task_exists(target))
      throw UnsupportedError(name + " of process " + std::to_string(target) +
                             ", outside the recording, cannot be recorded");
    return answer_syscall(t, -ESRCH);
  }
  // Every other request needs a tracee of this very thread (ptrace_check_attach), stopped
  // but for PTRACE_KILL and PTRACE_INTERRUPT (which only a PTRACE_SEIZE tracee takes: EIO).
  if (traced == tasks_.end() || traced->second.tracer != t.tid) return answer_syscall(t, -ESRCH);
  RecordTask& tracee = traced->second;
  if (request == PTRACE_INTERRUPT) return answer_syscall(t, -EIO);
  if (request == PTRACE_KILL) {
    // Since Linux 5.x a SIGKILL, like kill(2)'s: the tracee's end is recorded when it comes,
    // after this call's event (on_syscall_exit sends it).
    t.resume_tracee = {tracee.tid, 0, false, true};
    return answer_syscall(t, 0);
  }
  if (!tracee.tracer_stop) return answer_syscall(t, -ESRCH);
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
    case PTRACE_DETACH: {
      const int sig = int(data);
      if (sig < 0 || sig > 64) return answer_syscall(t, -EIO);
      const bool fault = tracee.tracer_stop_kind == TracerStop::Fault;
      if (request == PTRACE_SYSCALL && tracee.buffer.addr) {
        // Its tracer must see every syscall: the preload library goes off in its memory, at
        // the same point in replay (replay_ptrace), which needs it stopped at an event.
        if (!tracee.tracer_stop_at_event)
          throw UnsupportedError(name +
                                 " of a tracee stopped between its events, whose "
                                 "syscalls rewind buffers, is not supported yet");
        if (!switch_library_off_at(tracee.tid, tracee.buffer.addr))
          throw UnsupportedError(name +
                                 " of a task whose preload library cannot be turned "
                                 "off is not supported yet (rewind record --no-syscall-buffer "
                                 "records it)");
      }
      if (fault && sig != 0 && sig != tracee.tracer_stop)
        throw UnsupportedError(name + " with " + signal_name(sig) + " of a tracee stopped by its " +
                               signal_name(tracee.tracer_stop) + " fault is not supported yet");
      if (fault && sig == 0)
        throw UnsupportedError(name + " of a tracee stopped by its " +
                               signal_name(tracee.tracer_stop) +
                               " fault without the signal (the instruction runs again) is not "
                               "supported yet");
      if (sig && stops_the_process(tracee.tid, sig))
        throw UnsupportedError(name + " with " + signal_name(sig) +
                               " (a group-stop, which its tracer is told of too) is not "
                               "supported yet");
      answer_syscall(t, 0);
      if (request == PTRACE_DETACH) {
        tracee.tracer = 0;
        tracee.tracer_exitkill = tracee.tracer_sysgood = false;
      }
      // Resumed once this call's event is written (on_syscall_exit): the tracee's next
      // events come after it in the trace, as replay needs them (the writes before it).
      t.resume_tracee = {tracee.tid, sig, request == PTRACE_SYSCALL, false};
      return;
    }
    case PTRACE_PEEKTEXT:
    case PTRACE_PEEKDATA:
    case PTRACE_PEEKUSER: {
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
      const TracerStop kind = tracee.tracer_stop_kind;
      SigInfo si =
          kind == TracerStop::Exec
              ? make_siginfo(SIGTRAP, SI_USER, tracee.pid, task_real_uid(tracee.tid), 0)
          : kind == TracerStop::SyscallEntry || kind == TracerStop::SyscallExit
              ? make_siginfo(SIGTRAP, tracee.tracer_stop, tracee.pid, task_real_uid(tracee.tid), 0)
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
    case PTRACE_SETOPTIONS: {
      constexpr uint64_t kKnown = PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL;
      if (data & ~uint64_t(kKnown))
        throw UnsupportedError(name + " with options 0x" + [](uint64_t v) {
          char b[32];
          std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(v));
          return std::string(b);
        }(data & ~kKnown) + " is not supported yet");
      tracee.tracer_exitkill = data & PTRACE_O_EXITKILL;
      tracee.tracer_sysgood = data & PTRACE_O_TRACESYSGOOD;
      return answer_syscall(t, 0);
    }
    case PTRACE_GET_SYSCALL_INFO: {
      // struct ptrace_syscall_info (<linux/ptrace.h>); the kernel returns the size of what
      // the stop fills in and copies as much of it as `addr` bytes hold.
      struct {
        uint8_t op;
        uint8_t pad[3];
        uint32_t arch;
        uint64_t ip, sp;
        uint64_t words[7];  // entry: nr, args[6]; exit: rval, is_error (a byte)
      } info{};
      Registers now = get_regs(tracee.tid);
      info.arch = 0xc000003e;  // AUDIT_ARCH_X86_64
      info.ip = now.rip;
      info.sp = now.rsp;
      size_t size = offsetof(decltype(info), arch);
      if (tracee.tracer_stop_kind == TracerStop::SyscallEntry) {
        info.op = 1;  // PTRACE_SYSCALL_INFO_ENTRY
        const uint64_t entry[7] = {now.orig_rax, now.rdi, now.rsi, now.rdx,
                                   now.r10,      now.r8,  now.r9};
        std::memcpy(info.words, entry, sizeof entry);
        size = offsetof(decltype(info), words) + sizeof entry;
      } else if (tracee.tracer_stop_kind == TracerStop::SyscallExit) {
        info.op = 2;  // PTRACE_SYSCALL_INFO_EXIT
        info.words[0] = now.rax;
        info.words[1] = int64_t(now.rax) < 0 && int64_t(now.rax) >= -4095;  // IS_ERR_VALUE
        size = offsetof(decltype(info), words) + 8 + 1;
      }
      int64_t r = give(&info, std::min<uint64_t>(size, addr));
      return answer_syscall(t, r == 0 ? int64_t(size) : r);
    }
    case PTRACE_SETSIGINFO: {
      // The siginfo the signal it stopped for is delivered with, if its tracer passes it on.
      if (tracee.tracer_stop_kind != TracerStop::Signal &&
          tracee.tracer_stop_kind != TracerStop::Fault)
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
      if (!is_tracee_write(request))
        throw UnsupportedError(name + " of a stopped tracee is not supported yet");
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

}  // namespace rwd
