#include "reach_point.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/arch/insn.h"
#include "engine/arch/siginfo.h"
#include "engine/arch/signal_names.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/debug_registers.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/ticks/memory_digest.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

namespace {

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
    case Stop::Interrupted:
      return "an interrupt";
  }
  return "?";
}

bool debug_points() {
  return getenv("REWIND_DEBUG_POINTS") != nullptr;
}

}  // namespace

/// What a trampoline is planned from: the task's mappings, where its heap starts and the
/// code at the point. Read once for all the kinds the search tries.
struct PointSearch::PointCode {
  std::vector<ProcMapping> maps;
  uint64_t heap_start = 0;    ///< proc_brk_start
  ProcMapping mapping;        ///< the one holding the point's instruction
  std::vector<uint8_t> code;  ///< up to 32 bytes from the point on
};

namespace {
/// The point's code, or nullopt where no patch may go (patchable_code_mapping).
template <typename PointCode>
std::unique_ptr<PointCode> read_point_code(const ReplayTask& t, uint64_t x) {
  auto c = std::make_unique<PointCode>();
  c->maps = read_proc_maps(t.tid);
  const ProcMapping* m = patchable_code_mapping(c->maps, x);
  if (!m) return nullptr;
  c->mapping = *m;
  c->heap_start = proc_brk_start(t.tid);
  c->code = read_memory(t.tid, x, 32);
  return c;
}
}  // namespace

PointSearch::PointSearch(ReplayTask& t, const Event& e) : t_(t), e_(e) {
  const char* method = getenv("REWIND_POINT_SEARCH");
  kinds_ = {PatchKind::Jump, PatchKind::Int3};
  if (method && std::string(method) == "int3") kinds_ = {PatchKind::Int3};
  if (method && std::string(method) == "breakpoint") kinds_.clear();
  if (!t_.pauses.empty()) {
    // The point lies after the event's last buffered record: run to the pause there first,
    // without stopping at the point's instruction on the way.
    t_.stop_at_pause = true;
    return;
  }
  phase_ = Phase::Methods;
  if (at_point(get_regs(t_.tid)))
    found(PointMethod::AlreadyThere);
  else if (!through_repeats())
    next_method();
}

bool PointSearch::through_repeats() {
  // A point inside a repeated string instruction (a debugger inside the recording stepped
  // it: each step runs one repetition, rcx one less): the task stands on that instruction
  // with a larger rcx. A patch there would run every repetition at once; single steps run
  // them one at a time, as the recording's debugger did.
  Registers r = get_regs(t_.tid);
  if (r.rip != e_.regs.rip || r.rcx <= e_.regs.rcx || r.rcx - e_.regs.rcx > kMaxRepeatSteps)
    return false;
  if (rep_insn_at(t_.tid, r.rip) == 0) return false;
  for (uint64_t n = r.rcx - e_.regs.rcx; n > 0; --n) {
    ++stops_;
    Stop s = run_to_stop(t_, PTRACE_SINGLESTEP);
    if (s.kind != Stop::Signal || s.sig != SIGTRAP) throw fail(describe(s, t_.tid));
  }
  if (!at_point(get_regs(t_.tid))) throw fail("the end of its repetitions in another state");
  found(PointMethod::Steps);
  return true;
}

PointSearch::~PointSearch() {
  t_.stop_at_pause = false;
  install_.reset();  // puts the code back where the search ended early (a replay abandoned)
  clear_breakpoint();
}

void PointSearch::remove_patch() {
  if (!install_) return;
  install_->remove();
  install_.reset();
  ++code_changes_;
}

void PointSearch::clear_breakpoint() {
  if (!hw_breakpoint_) return;
  clear_exec_breakpoint(t_.tid);
  hw_breakpoint_ = false;
}

DivergenceError PointSearch::fail(const std::string& what) const {
  return DivergenceError("replay diverged at event " + std::to_string(e_.number) + " (task " +
                         std::to_string(e_.tid) + ", " + event_kind_name(e_.kind) +
                         "): the task reached " + what + " before the recorded point at " +
                         hex(e_.regs.rip));
}

bool PointSearch::at_point(const Registers& r) {
  // orig_rax is the kernel's note of the syscall being returned from (-1 or its number,
  // depending on how the stop was reached), not program state: a point ignores it.
  Registers same = r;
  same.orig_rax = e_.regs.orig_rax;
  if (!registers_equal(same, e_.regs)) return false;
  // The stack: a loop whose registers repeat keeps its counter there; then the
  // objects the registers point at (an interpreter's loop); then all of memory.
  // The mappings stay as they were between two stops of one search (the task makes no
  // syscall before its point), unless the search changed the code.
  if (!maps_ || maps_read_at_ != code_changes_) {
    maps_ = read_proc_maps(t_.tid);
    maps_read_at_ = code_changes_;
  }
  const std::vector<ProcMapping>& maps = *maps_;
  // The words the trampoline compares (where it did not: an int3, a hardware breakpoint).
  if (!e_.stack_words.empty() &&
      point_stack_words(t_.tid, maps, e_.exclusions, e_.regs.rsp) != e_.stack_words)
    return false;
  if (digest_stack_window(t_.tid, maps, e_.exclusions, e_.regs.rsp) != e_.stack_digest ||
      digest_register_windows(t_.tid, maps, e_.exclusions, e_.regs) != e_.register_digest)
    return false;
  ++full_digests_;
  if (digest_memory(t_.tid, maps, e_.exclusions) != e_.digest) return false;
  if (r.orig_rax != e_.regs.orig_rax) set_regs(t_.tid, same);
  return true;
}

void PointSearch::found(PointMethod m) {
  phase_ = Phase::Found;
  found_ = PointFound{stops_, m, full_digests_};
}

void PointSearch::next_method() {
  if (debug_points() && !code_ && stops_ == 0) {
    Registers r = get_regs(t_.tid);
    auto d = first_register_difference(e_.regs, r);
    MemoryDigest g = digest_memory(t_.tid, e_.exclusions);
    fprintf(stderr, "point %llu: regs %s, digest %s\n", (unsigned long long)e_.number,
            d ? d->c_str() : "equal", g == e_.digest ? "equal" : "differs");
    std::string words;
    for (uint64_t w : e_.stack_words) words += " " + hex(w);
    fprintf(stderr, "point %llu: stack words%s\n", (unsigned long long)e_.number, words.c_str());
    if (const char* f = getenv("REWIND_DEBUG_DIGEST")) {
      if (FILE* out = fopen(f, "a")) {
        fprintf(out, "replay point %llu\n%s", (unsigned long long)e_.number,
                digest_report(t_.tid).c_str());
        fclose(out);
      }
    }
  }
  const uint64_t x = e_.regs.rip;
  if (!kinds_.empty() && !code_) code_ = read_point_code<PointCode>(t_, x);
  while (code_ && !kinds_.empty()) {
    kind_ = kinds_.front();
    kinds_.erase(kinds_.begin());
    plan_ = plan_point_trampoline(kind_, code_->code, x, e_.regs, code_->maps, code_->heap_start,
                                  PassChecks{.stack_words = e_.stack_words});
    if (plan_) {
      phase_ = Phase::AwaitPatch;  // the driver may refuse it (its own breakpoints there)
      return;
    }
    if (debug_points()) {
      std::string bytes;
      for (size_t i = 0; i < code_->code.size() && i < 6; ++i) {
        char b[4];
        snprintf(b, sizeof b, " %02x", code_->code[i]);
        bytes += b;
      }
      fprintf(stderr, "point %llu at %llx (%s+%llx, bytes%s): no trampoline\n",
              (unsigned long long)e_.number, (unsigned long long)x, code_->mapping.path.c_str(),
              (unsigned long long)(x - code_->mapping.start + code_->mapping.offset),
              bytes.c_str());
    }
  }
  // The hardware breakpoint: a stop at every pass of the instruction.
  set_exec_breakpoint(t_.tid, x);
  hw_breakpoint_ = true;
  phase_ = Phase::Breakpoint;
}

std::optional<std::pair<uint64_t, size_t>> PointSearch::patch_request() const {
  if (phase_ != Phase::AwaitPatch) return std::nullopt;
  return std::make_pair(plan_->point, plan_->patch.size());
}

void PointSearch::patch_answer(bool allowed) {
  if (phase_ != Phase::AwaitPatch) return;
  const uint64_t x = e_.regs.rip;
  if (!allowed) return next_method();
  Registers start = get_regs(t_.tid);
  std::optional<uint64_t> start_copy;
  if (start.rip > x && start.rip < x + plan_->patch.size()) {
    // The task stands on an instruction the patch covers: it starts at its copy.
    start_copy = moved_copy(*plan_, start.rip);
    if (!start_copy) return next_method();
  }
  auto install = std::make_unique<TrampolineInstall>();
  if (!install->install(t_, *plan_)) return next_method();
  install_ = std::move(install);
  ++code_changes_;
  if (start_copy) {
    start.rip = *start_copy;
    set_regs(t_.tid, start);
  }
  phase_ = Phase::Trampoline;
}

void PointSearch::before_resume() {
  if (phase_ != Phase::Breakpoint) return;
  Registers r = get_regs(t_.tid);
  if (r.rip == e_.regs.rip) {
    // On the instruction in the wrong state: the resume flag lets it run once without
    // triggering the breakpoint (RF, Intel SDM vol. 3, 17.3.1.1).
    r.eflags |= kTransientFlags;
    set_regs(t_.tid, r);
  }
}

bool PointSearch::code_patched() const {
  return phase_ == Phase::Trampoline && install_;
}

bool PointSearch::program_trap(const Stop& s) {
  if (s.kind != Stop::Signal || s.sig != SIGTRAP) return false;
  Registers r = get_regs(t_.tid);
  if (r.rip != e_.regs.rip || siginfo_code(get_siginfo(t_.tid)) != SI_KERNEL) return false;
  // The int3 ends just before the point: no patch of the search's covers it (they start at
  // the point), so it is the program's (written there by a debugger the recording holds).
  std::vector<uint8_t> byte = read_memory(t_.tid, r.rip - 1, 1);
  if (byte.size() != 1 || byte[0] != 0xcc) return false;
  if (!at_point(r)) throw fail("its own int3 in another state");
  remove_patch();
  clear_breakpoint();
  found(PointMethod::ProgramTrap);
  return true;
}

void PointSearch::on_stop(const Stop& s) {
  ++stops_;
  if ((phase_ == Phase::Trampoline || phase_ == Phase::Breakpoint) && program_trap(s)) return;
  switch (phase_) {
    case Phase::Pauses:
      if (s.kind != Stop::BufferPause) {
        t_.stop_at_pause = false;
        throw DivergenceError("replay diverged at event " + std::to_string(e_.number) + " (task " +
                              std::to_string(e_.tid) + ", " + event_kind_name(e_.kind) +
                              "): the task reached " + describe(s, t_.tid) +
                              " before its last buffered syscall");
      }
      if (!t_.pauses.empty()) return;
      t_.stop_at_pause = false;
      phase_ = Phase::Methods;
      if (at_point(get_regs(t_.tid))) return found(PointMethod::AlreadyThere);
      return next_method();
    case Phase::Trampoline:
      return trampoline_stop(s);
    case Phase::Breakpoint: {
      Registers r = get_regs(t_.tid);
      if (s.kind != Stop::Signal || s.sig != SIGTRAP || r.rip != e_.regs.rip)
        throw fail(describe(s, t_.tid));
      if (!at_point(r)) return;
      clear_breakpoint();
      return found(PointMethod::Breakpoint);
    }
    case Phase::Methods:
    case Phase::AwaitPatch:
    case Phase::Found:
      throw Error("point search: a stop where none was expected");
  }
}

void PointSearch::trampoline_stop(const Stop& s) {
  const uint64_t x = e_.regs.rip;
  Registers r = get_regs(t_.tid);
  bool trap = s.kind == Stop::Signal && s.sig == SIGTRAP;
  if (trap && r.rip == plan_->match_trap) {
    r.rip = x;  // the trampoline trapped with the program's registers, at the point
    set_regs(t_.tid, r);
    if (at_point(r)) {
      remove_patch();
      return found(kind_ == PatchKind::Jump ? PointMethod::Jump : PointMethod::Int3);
    }
    r.rip = plan_->resume;  // same registers, other memory: run the displaced code
    set_regs(t_.tid, r);
    return;
  }
  if (trap && r.rip > x + 1 && r.rip <= x + plan_->patch.size()) {
    // An int3 of the patch after the jump's first byte: code jumped to an instruction the
    // patch covers. Nothing ran there yet: go on at its copy.
    if (auto to = moved_copy(*plan_, r.rip - 1)) {
      r.rip = *to;
      set_regs(t_.tid, r);
      return;
    }
    // Into the middle of an instruction (overlapping code): go on without the patch.
    remove_patch();
    r.rip -= 1;
    set_regs(t_.tid, r);
    if (debug_points())
      fprintf(stderr, "point %llu at %llx: code entered the patch at %llx\n",
              (unsigned long long)e_.number, (unsigned long long)x, (unsigned long long)r.rip);
    return next_method();
  }
  install_->restore_code();
  install_.reset();
  ++code_changes_;
  throw fail(describe(s, t_.tid));
}

}  // namespace rwd
