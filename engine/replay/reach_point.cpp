#include "reach_point.h"

#include <signal.h>
#include <sys/ptrace.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/arch/signal_names.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"
#include "engine/ticks/memory_digest.h"

namespace rwd {

namespace {
bool regs_equal(const Registers& a, const Registers& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

/// An int3 at one address, put in and taken out around each run of the task.
class Breakpoint {
 public:
  Breakpoint(pid_t tid, uint64_t addr) : tid_(tid), addr_(addr) {
    errno = 0;
    word_ = ptrace(PTRACE_PEEKTEXT, tid, addr, nullptr);
    if (errno) throw_errno("read code at " + hex(addr));
  }
  ~Breakpoint() { remove(); }
  void insert() {
    if (inserted_) return;
    long patched = (word_ & ~0xffL) | 0xcc;
    if (ptrace(PTRACE_POKETEXT, tid_, addr_, patched) != 0) throw_errno("set breakpoint");
    inserted_ = true;
  }
  void remove() {
    if (!inserted_) return;
    ptrace(PTRACE_POKETEXT, tid_, addr_, word_);
    inserted_ = false;
  }

 private:
  pid_t tid_;
  uint64_t addr_;
  long word_ = 0;
  bool inserted_ = false;
};

std::string describe(const Stop& s, pid_t tid) {
  switch (s.kind) {
    case Stop::SyscallEntry:
    case Stop::SyscallExit:
      return "syscall " + syscall_name(long(get_regs(tid).orig_rax));
    case Stop::Signal:
      return signal_name(s.sig);
    case Stop::Exited:
      return "its end";
    case Stop::Event:
      return "a ptrace event";
  }
  return "?";
}
}  // namespace

uint64_t reach_point(ReplayTask& t, const Event& e) {
  auto at_point = [&](const Registers& r) {
    return regs_equal(r, e.regs) && digest_memory(t.tid, e.exclusions) == e.digest;
  };
  if (at_point(get_regs(t.tid))) return 0;
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
  Breakpoint bp(t.tid, e.regs.rip);
  uint64_t stops = 0;
  for (;;) {
    Registers r = get_regs(t.tid);
    if (r.rip == e.regs.rip) {
      // Standing on the breakpoint address in the wrong state: execute that instruction
      // first, without the int3 (a syscall there would stop as one: PTRACE_SYSEMU_SINGLESTEP).
      bp.remove();
      Stop s = run_to_stop(t, PTRACE_SYSEMU_SINGLESTEP);
      if (s.kind != Stop::Signal || s.sig != SIGTRAP) throw fail(describe(s, t.tid));
    }
    bp.insert();
    Stop s = run_to_stop(t, PTRACE_SYSEMU);
    bp.remove();
    ++stops;
    r = get_regs(t.tid);
    if (s.kind != Stop::Signal || s.sig != SIGTRAP || r.rip != e.regs.rip + 1)
      throw fail(describe(s, t.tid));
    r.rip = e.regs.rip;  // back onto the instruction the int3 replaced
    set_regs(t.tid, r);
    if (at_point(r)) return stops;
  }
}

}  // namespace rwd
