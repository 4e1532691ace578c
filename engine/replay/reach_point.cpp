#include "reach_point.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "engine/arch/signal_names.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/debug_registers.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/replay/point_trampoline.h"
#include "engine/replay/replay_observer.h"
#include "engine/replay/trampoline_install.h"
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

/// Tells the observer (if any) that a code patch is in place, for as long as this lives.
class PatchPermit {
 public:
  PatchPermit(const ReplayTask& t, uint64_t addr, size_t len) : observer_(replay_observer()) {
    allowed_ = !observer_ || observer_->begin_code_patch(t, addr, len);
  }
  ~PatchPermit() {
    if (observer_ && allowed_) observer_->end_code_patch();
  }
  PatchPermit(const PatchPermit&) = delete;
  PatchPermit& operator=(const PatchPermit&) = delete;
  bool allowed() const { return allowed_; }

 private:
  ReplayObserver* observer_;
  bool allowed_ = false;
};

/// The address of the trampoline's copy of the covered instruction at `addr`, if one starts
/// there.
std::optional<uint64_t> moved_copy(const PointTrampoline& p, uint64_t addr) {
  for (const auto& [from, to] : p.moved)
    if (from == addr) return to;
  return std::nullopt;
}

/// How a search with a trampoline ended.
enum class TrampolineResult {
  Found,     ///< the task stands at the point
  Fallback,  ///< no trampoline, or the task entered the patched bytes other than at the
             ///< point: code restored, task unchanged or back on the instruction it entered
};

/// The fast search (point_trampoline.h): runs `t` with the point's instructions replaced by
/// a jump to a trampoline that traps only when the registers match; each trap is checked
/// with `at_point` (full registers and memory digest). `stops` counts the task's stops.
/// What a trampoline is planned from: the task's mappings and the code at the point. Read
/// once for all the kinds reach_point tries.
struct PointCode {
  std::vector<ProcMapping> maps;
  ProcMapping mapping;        ///< the one holding the point's instruction
  std::vector<uint8_t> code;  ///< up to 32 bytes from the point on
};

/// The point's code, or nullopt where no patch may go: only private, read-only code (writing
/// into a shared file mapping would change the file, and a patch in writable memory, a JIT's
/// code, would change the memory digest).
std::optional<PointCode> read_point_code(const ReplayTask& t, uint64_t x) {
  PointCode c;
  c.maps = read_proc_maps(t.tid);
  const ProcMapping* m = nullptr;
  for (const auto& candidate : c.maps)
    if (x >= candidate.start && x < candidate.end) m = &candidate;
  if (!m || m->shared || !m->exec || m->write || m->is_special()) return std::nullopt;
  c.mapping = *m;
  c.code = read_memory(t.tid, x, 32);
  return c;
}

template <typename AtPoint, typename Fail>
TrampolineResult search_with_trampoline(PatchKind kind, const PointCode& pc, ReplayTask& t,
                                        const Event& e, AtPoint&& at_point, Fail&& fail,
                                        uint64_t& stops) {
  const uint64_t x = e.regs.rip;
  auto plan = plan_point_trampoline(kind, pc.code, x, e.regs, pc.maps);
  if (!plan) {
    if (getenv("REWIND_DEBUG_POINTS")) {
      std::string bytes;
      for (size_t i = 0; i < pc.code.size() && i < 6; ++i) {
        char b[4];
        snprintf(b, sizeof b, " %02x", pc.code[i]);
        bytes += b;
      }
      fprintf(stderr, "point %llu at %llx (%s+%llx, bytes%s): no trampoline\n",
              (unsigned long long)e.number, (unsigned long long)x, pc.mapping.path.c_str(),
              (unsigned long long)(x - pc.mapping.start + pc.mapping.offset), bytes.c_str());
    }
    return TrampolineResult::Fallback;
  }
  PatchPermit permit(t, x, plan->patch.size());
  if (!permit.allowed()) return TrampolineResult::Fallback;
  Registers start = get_regs(t.tid);
  std::optional<uint64_t> start_copy;
  if (start.rip > x && start.rip < x + plan->patch.size()) {
    // The task stands on an instruction the patch covers: it starts at its copy.
    start_copy = moved_copy(*plan, start.rip);
    if (!start_copy) return TrampolineResult::Fallback;
  }
  TrampolineInstall install;
  if (!install.install(t, *plan)) return TrampolineResult::Fallback;
  if (start_copy) {
    Registers r = get_regs(t.tid);
    r.rip = *start_copy;
    set_regs(t.tid, r);
  }
  for (;;) {
    Stop s = run_to_stop(t, PTRACE_SYSEMU);
    ++stops;
    Registers r = get_regs(t.tid);
    bool trap = s.kind == Stop::Signal && s.sig == SIGTRAP;
    if (trap && r.rip == plan->match_trap) {
      r.rip = x;  // the trampoline trapped with the program's registers, at the point
      set_regs(t.tid, r);
      if (at_point(r)) {
        install.remove();
        return TrampolineResult::Found;
      }
      r.rip = plan->resume;  // same registers, other memory: run the displaced code
      set_regs(t.tid, r);
      continue;
    }
    if (trap && r.rip > x + 1 && r.rip <= x + plan->patch.size()) {
      // An int3 of the patch after the jump's first byte: code jumped to an instruction the
      // patch covers. Nothing ran there yet: go on at its copy.
      if (auto to = moved_copy(*plan, r.rip - 1)) {
        r.rip = *to;
        set_regs(t.tid, r);
        continue;
      }
      // Into the middle of an instruction (overlapping code): go on without the patch.
      install.remove();
      r.rip -= 1;
      set_regs(t.tid, r);
      if (getenv("REWIND_DEBUG_POINTS"))
        fprintf(stderr, "point %llu at %llx: code entered the patch at %llx\n",
                (unsigned long long)e.number, (unsigned long long)x, (unsigned long long)r.rip);
      return TrampolineResult::Fallback;
    }
    install.restore_code();
    throw fail(describe(s, t.tid));
  }
}
}  // namespace

PointSearch reach_point(ReplayTask& t, const Event& e) {
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
  if (at_point(get_regs(t.tid))) return {stops, PointMethod::AlreadyThere};
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
  // A jump to a register compare first; where the code after the point cannot be moved, an
  // int3 (a stop at every pass, but cheaper than a hardware breakpoint's).
  const char* method = getenv("REWIND_POINT_SEARCH");
  std::vector<PatchKind> kinds = {PatchKind::Jump, PatchKind::Int3};
  if (method && std::string(method) == "int3") kinds = {PatchKind::Int3};
  if (method && std::string(method) == "breakpoint") kinds.clear();
  std::optional<PointCode> code;
  if (!kinds.empty()) code = read_point_code(t, e.regs.rip);
  if (code)
    for (PatchKind kind : kinds)
      if (search_with_trampoline(kind, *code, t, e, at_point, fail, stops) ==
          TrampolineResult::Found)
        return {stops, kind == PatchKind::Jump ? PointMethod::Jump : PointMethod::Int3};
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
    if (at_point(r)) return {stops, PointMethod::Breakpoint};
  }
}

}  // namespace rwd
