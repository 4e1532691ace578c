#include "reach_point.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/arch/signal_names.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/debug_registers.h"
#include "engine/os/ptrace_ops.h"
#include "engine/ticks/memory_digest.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

/// The hardware breakpoint for one search, removed when it ends.
struct ScopedBreakpoint {
  ScopedBreakpoint(pid_t tid, uint64_t addr) : tid(tid) { set_exec_breakpoint(tid, addr); }
  ~ScopedBreakpoint() { clear_exec_breakpoint(tid); }
  pid_t tid;
};

std::string describe(const Stop& s, pid_t tid) {
  switch (s.kind) {
    case Stop::SyscallEntry:
    case Stop::SyscallExit: {
      Registers r = get_regs(tid);
      if (r.orig_rax == RWD_SYS_DIVERGED)  // the library's report (rewind_preload_abi.h)
        return "syscall " + syscall_name(long(r.rdi)) + " where the recording buffered " +
               syscall_name(long(r.rsi));
      return "syscall " + syscall_name(long(r.orig_rax));
    }
    case Stop::Signal:
      return signal_name(s.sig);
    case Stop::Exited:
      return "its end";
    case Stop::Event:
      return "a ptrace event";
    case Stop::BufferPause:
      return "a pause in its syscall buffer";
  }
  return "?";
}
}  // namespace

uint64_t reach_point(ReplayTask& t, const Event& e) {
  uint64_t stops = 0;
  if (!t.pauses.empty()) {
    // The point lies after the event's last buffered record: run to the pause there first
    // (the replayer asks for one at every point's last record), without stopping at the
    // point's instruction on the way.
    t.stop_at_pause = true;
    while (!t.pauses.empty()) {
      Stop s = run_to_stop(t, PTRACE_SYSEMU);
      ++stops;
      if (s.kind != Stop::BufferPause) {
        t.stop_at_pause = false;
        throw DivergenceError("replay diverged at event " + std::to_string(e.number) + " (task " +
                              std::to_string(e.tid) + ", " + event_kind_name(e.kind) +
                              "): the task reached " + describe(s, t.tid) +
                              " before its last buffered syscall");
      }
    }
    t.stop_at_pause = false;
  }
  // orig_rax is the kernel's note of the syscall being returned from (-1 or its number,
  // depending on how the stop was reached), not program state: a point ignores it.
  auto same_state = [&](Registers r) {
    r.orig_rax = e.regs.orig_rax;
    return registers_equal(r, e.regs);
  };
  auto at_point = [&](const Registers& r) {
    if (!same_state(r) || digest_memory(t.tid, e.exclusions) != e.digest) return false;
    if (r.orig_rax != e.regs.orig_rax) {
      Registers fixed = r;
      fixed.orig_rax = e.regs.orig_rax;
      set_regs(t.tid, fixed);
    }
    return true;
  };
  if (at_point(get_regs(t.tid))) return stops;
  if (getenv("REWIND_DEBUG_POINTS")) {
    Registers r = get_regs(t.tid);
    auto d = first_register_difference(e.regs, r);
    MemoryDigest g = digest_memory(t.tid, e.exclusions);
    fprintf(stderr, "point %llu: regs %s, digest %s\n", (unsigned long long)e.number,
            d ? d->c_str() : "equal", g == e.digest ? "equal" : "differs");
    if (const char* f = getenv("REWIND_DEBUG_DIGEST")) {
      if (FILE* out = fopen(f, "a")) {
        fprintf(out, "replay point %llu\n%s", (unsigned long long)e.number,
                digest_report(t.tid).c_str());
        fclose(out);
      }
    }
  }
  auto fail = [&](const std::string& what) {
    return DivergenceError("replay diverged at event " + std::to_string(e.number) + " (task " +
                           std::to_string(e.tid) + ", " + event_kind_name(e.kind) +
                           "): the task reached " + what + " before the recorded point at " +
                           hex(e.regs.rip));
  };
  ScopedBreakpoint bp(t.tid, e.regs.rip);
  for (;;) {
    Registers r = get_regs(t.tid);
    if (r.rip == e.regs.rip) {
      // On the instruction in the wrong state: the resume flag lets it run once without
      // triggering the breakpoint (RF, Intel SDM vol. 3, 17.3.1.1).
      r.eflags |= kTransientFlags;
      set_regs(t.tid, r);
    }
    Stop s = run_to_stop(t, PTRACE_SYSEMU);
    ++stops;
    r = get_regs(t.tid);
    if (s.kind != Stop::Signal || s.sig != SIGTRAP || r.rip != e.regs.rip)
      throw fail(describe(s, t.tid));
    if (at_point(r)) return stops;
  }
}

}  // namespace rwd
