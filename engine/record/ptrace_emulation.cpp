// ptrace(2) made by the recorded program. rewind is the real tracer of every recorded task, so
// the kernel would refuse the program's own requests (EPERM for PTRACE_TRACEME): the recorder
// answers them instead, as the kernel would answer them natively, and keeps who traces whom
// (rr emulates ptrace between its tracees the same way, in its RecordTask). Each answer is the
// syscall's recorded result, which replay gives back like any emulated syscall.
//
// Emulated so far: PTRACE_TRACEME (a program checking that no debugger traces it, a child
// asking its parent to trace it), and the kernel's answers to requests that name a task the
// caller does not trace or that runs. A tracee's stops are not: where a traced task would
// stop for its tracer (a signal, the SIGTRAP after execve), the recording stops with a line
// that says so.
#include <sys/ptrace.h>
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <string>
#include <utility>

#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/record/record_session.h"

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
  // Every other request needs a tracee of this very thread (ptrace_check_attach); a tracee
  // that runs (none stops yet: refuse_tracee_stop) answers ESRCH too, but for PTRACE_KILL,
  // which kills it, and PTRACE_INTERRUPT, which only a PTRACE_SEIZE tracee takes (EIO).
  if (traced == tasks_.end() || traced->second.tracer != t.tid) return answer_syscall(t, -ESRCH);
  if (request == PTRACE_INTERRUPT) return answer_syscall(t, -EIO);
  if (request == PTRACE_KILL)
    throw UnsupportedError(name + " of a recorded tracee is not supported yet");
  answer_syscall(t, -ESRCH);
}

void RecordSession::refuse_tracee_stop(const RecordTask& t, const std::string& what) {
  if (t.tracer == 0) return;
  const std::string why = t.tracer == kTracerOutside
                              ? "its tracer is a process outside the recording"
                              : "stops for a tracer inside the recording are not supported yet";
  throw UnsupportedError("task " + std::to_string(t.tid) +
                         " would stop for its tracer (PTRACE_TRACEME) at " + what + ": " + why);
}

void RecordSession::forget_tracer(pid_t tid) {
  for (auto& [_, task] : tasks_)
    if (task.tracer == tid) task.tracer = 0;
}

}  // namespace rwd
