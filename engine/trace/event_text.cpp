#include "engine/trace/event_text.h"

#include <sys/wait.h>

#include <cstring>

#include "engine/arch/registers.h"
#include "engine/arch/signal_names.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/trace/buffered_records.h"

namespace rwd {

/// The text of `e` without its buffered records.
static std::string describe_kind(const Event& e);

std::string error_name(int64_t err) {
  static constexpr const char* kRestart[] = {"ERESTARTSYS", "ERESTARTNOINTR", "ERESTARTNOHAND",
                                             "ENOIOCTLCMD", "ERESTART_RESTARTBLOCK"};
  if (err >= 512 && err <= 516) return kRestart[err - 512];
  const char* name = strerrorname_np(int(err));
  return name ? name : "?";
}

std::string describe_event(const Event& e) {
  std::string s = describe_kind(e);
  if (!e.buffered.empty()) {
    try {
      size_t n = parse_buffered_records(e.buffered).size();
      s += (s.empty() ? "(+" : " (+") + std::to_string(n) + " buffered syscall" +
           (n == 1 ? ")" : "s)");
    } catch (const Error&) {
      s += " (+malformed buffered records)";
    }
  }
  return s;
}

static std::string describe_kind(const Event& e) {
  switch (e.kind) {
    case EventKind::Syscall: {
      bool error = syscall_failed(e.result);
      bool address = !error && syscall_has(e.syscallno(), kReturnsAddress);
      std::string s = syscall_name(e.syscallno()) + " = " +
                      (address ? hex(uint64_t(e.result)) : std::to_string(e.result));
      if (error) s += " (" + error_name(-e.result) + ")";
      if (e.child_tid) s += " (new task " + std::to_string(e.child_tid) + ")";
      if (e.output != OutputStream::None)
        s += e.output == OutputStream::Stdout ? " [stdout]" : " [stderr]";
      if (e.syscallno() == SYS_mmap && !e.file.empty())
        s += " [" + e.file +
             (e.shared_file ? ", shared file " + std::to_string(e.shared_file) : "") + "]";
      if (e.resizes_shared_file())
        s += " [shared file " + std::to_string(e.shared_file) + " now " +
             std::to_string(e.written_memory.addr) + " bytes]";
      else if (e.writes_shared_file())
        s += " [shared file " + std::to_string(e.shared_file) + ", " +
             std::to_string(e.written_memory.bytes.size()) + " bytes at offset " +
             std::to_string(e.written_memory.addr) + "]";
      else if (e.written_tid && !e.written_memory.bytes.empty())
        s += " [" + std::to_string(e.written_memory.bytes.size()) + " bytes into task " +
             std::to_string(e.written_tid) + " at " + hex(e.written_memory.addr) + "]";
      else if (e.written_tid)
        s += " [task " + std::to_string(e.written_tid) + "]";
      return s;
    }
    case EventKind::Exec: {
      std::string s;
      for (const auto& a : e.argv) s += (s.empty() ? "" : " ") + a;
      return s;
    }
    case EventKind::Signal:
      return signal_name(e.signo) + (e.synchronous ? " (fault)" : "") + " at " + hex(e.regs.rip);
    case EventKind::Exit:
      return WIFSIGNALED(e.status) ? "killed by " + signal_name(WTERMSIG(e.status))
                                   : "status " + std::to_string(WEXITSTATUS(e.status));
    case EventKind::Rdtsc:
      return std::to_string((e.regs.rdx << 32) | (e.regs.rax & 0xffffffffu));
    case EventKind::Cpuid:
      return "eax " + hex(e.regs.rax) + " ebx " + hex(e.regs.rbx) + " ecx " + hex(e.regs.rcx) +
             " edx " + hex(e.regs.rdx);
    case EventKind::SyscallEntry:
      return syscall_name(e.syscallno()) + " (blocked; another task runs)";
    case EventKind::Sched:
      return "preempted at " + hex(e.regs.rip);
    case EventKind::End:
      return "";
  }
  return "";
}
}  // namespace rwd
