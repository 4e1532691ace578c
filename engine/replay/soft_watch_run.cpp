// Runs with software debug registers (soft_watch_run.h).
#include "engine/replay/soft_watch_run.h"

#include <signal.h>
#include <sys/ptrace.h>

#include <cstring>
#include <exception>
#include <optional>

#include "engine/arch/siginfo.h"
#include "engine/arch/write_insn.h"
#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/soft_debug_registers.h"
#include "engine/os/tracee_memory.h"
#include "engine/replay/watched_pages.h"

namespace rwd {

namespace {

constexpr uint64_t kRflagsTrap = 0x100;  ///< rflags.TF

/// Whether `s` is the trap of a single step: si_code TRAP_TRACE, or TRAP_BRKPT where the
/// kernel found no cause in DR6 (stop_classification.cpp tells more).
bool step_trap(const Stop& s) {
  if (s.kind != Stop::Signal || s.sig != SIGTRAP) return false;
  int code = siginfo_code(s.siginfo);
  return code == TRAP_TRACE || code == TRAP_BRKPT;
}

Stop interrupted() {
  Stop s;
  s.kind = Stop::Interrupted;
  return s;
}

/// The syscall instruction saved rflags in r11 with the trap flag of rewind's step; the
/// program's rflags do not have it (as recorded).
void drop_step_flag(pid_t tid) {
  Registers r;
  if (try_get_regs(tid, r) && (r.r11 & kRflagsTrap)) {
    r.r11 &= ~kRflagsTrap;
    try_set_regs(tid, r);
  }
}

/// One resume by a single step of rewind's own; the stop after it.
Stop own_step(ReplayTask& t, int sig, const InterruptWhen& interrupt) {
  resume(t.tid, PTRACE_SYSEMU_SINGLESTEP, sig);
  Stop s = wait_stop(t, PTRACE_SYSEMU_SINGLESTEP, interrupt);
  if (s.kind == Stop::SyscallEntry) drop_step_flag(t.tid);
  return s;
}

/// Whether the instruction at `before.rip`, about to run, writes watched bytes of `tid`
/// through an explicit memory operand (a store of the value already there included, as the
/// CPU's slots see it).
bool stores_on_watch(pid_t tid, const Registers& before) {
  std::vector<SoftWatchRange> ranges = soft_write_ranges(tid);
  if (ranges.empty()) return false;
  std::vector<uint8_t> code = read_memory(tid, before.rip, 16);
  for (const SoftWatchRange& w : ranges) {
    if (insn_writes_to(code, before.rip, before, w.addr, uint64_t(w.len)))
      return soft_debug_note_write(tid, w.addr, uint64_t(w.len));
  }
  return false;
}

/// Whether the instruction just run pushed 8 bytes (a call or a push: rsp went down by 8
/// from `before`) onto watched bytes: a write of the same value fires too, as with the
/// CPU's slots (the return address a call writes is often the one already there).
bool pushed_on_watch(pid_t tid, uint64_t before, const Registers& now) {
  return before - now.rsp == 8 && soft_debug_note_write(tid, now.rsp, 8);
}

/// One single step of `t` (rewind's own, or the caller's `request` when `step`) from
/// `before`, the registers where it stands (rip 0: not known), looked at for the slots.
/// Returns the stop where it ends the run: a slot fired, it was the caller's step, or it is
/// not a step's trap. Otherwise nullopt, with `before` now the registers after the step.
std::optional<Stop> step_and_look(ReplayTask& t, int request, bool step, int sig,
                                  const InterruptWhen& interrupt, Registers& before) {
  bool stores = before.rip && stores_on_watch(t.tid, before);
  Stop s;
  if (step) {
    resume(t.tid, request, sig);
    s = wait_stop(t, request, interrupt);
  } else {
    s = own_step(t, sig, interrupt);
  }
  if (!step_trap(s)) return s;
  Registers r;
  if (!try_get_regs(t.tid, r)) return s;
  bool pushed = pushed_on_watch(t.tid, before.rsp, r);
  if (soft_debug_after_step(t.tid, r.rip, !step) || pushed || stores || step) return s;
  before = r;
  return std::nullopt;
}

/// The registers of `tid`, or zeros where they cannot be read.
Registers registers_or_none(pid_t tid) {
  Registers r{};
  if (!try_get_regs(tid, r)) r = Registers{};
  return r;
}

/// Single steps (each one's own, or the one the caller asked for with `step`) until a slot
/// fires or another stop comes.
Stop run_by_steps(ReplayTask& t, int request, bool step, int sig, const InterruptWhen& interrupt) {
  Registers before = registers_or_none(t.tid);
  for (;;) {
    if (std::optional<Stop> s = step_and_look(t, request, step, sig, interrupt, before)) return *s;
    sig = 0;
    if (interrupt.any() && interrupt.due()) return interrupted();
  }
}

/// An execute slot kept as an int3 over the first byte of its instruction for one run of a
/// task (rr's and gdb's software breakpoint), taken out again when the run stops, so that no
/// other task, checkpoint or memory digest sees it: the run goes at full speed where single
/// steps, each a ptrace round trip, took minutes to reach a point far from its event.
class ExecTrap {
 public:
  /// Puts the int3 at `addr` in `tid`'s memory. False, with nothing changed, where the byte
  /// there is an int3 already (a breakpoint of the timeline's, or the program's own) or
  /// cannot be read or written (a mapping the kernel will not let a tracer write).
  bool insert(pid_t tid, uint64_t addr) {
    std::vector<uint8_t> b = read_memory(tid, addr, 1);
    if (b.size() != 1 || b[0] == kInt3) return false;
    try {
      write_memory(tid, addr, &kInt3, 1);
    } catch (const SystemError&) {
      return false;
    }
    tid_ = tid;
    addr_ = addr;
    original_ = b[0];
    return true;
  }
  /// Where `s` is the int3's trap (SIGTRAP, si_code SI_KERNEL, rip one byte past it), makes
  /// it the slot's: rip back at the instruction, the slot's bit in the emulated DR6, si_code
  /// TRAP_HWBKPT, as the CPU reports an execute slot.
  void stopped_by(Stop& s) {
    if (!tid_ || s.kind != Stop::Signal || s.sig != SIGTRAP || siginfo_code(s.siginfo) != SI_KERNEL)
      return;
    Registers r;
    if (!try_get_regs(tid_, r) || r.rip != addr_ + 1) return;
    r.rip = addr_;
    set_regs(tid_, r);
    soft_debug_after_step(tid_, r.rip, true);
    const int code = TRAP_HWBKPT;
    std::memcpy(s.siginfo.data() + 8, &code, sizeof code);  // siginfo_t.si_code
  }
  /// Puts the instruction's byte back (nothing where the task's memory is gone).
  void remove() noexcept {
    if (!tid_) return;
    try {
      write_memory(tid_, addr_, &original_, 1);
    } catch (const std::exception&) {
    }
    tid_ = 0;
  }
  ~ExecTrap() { remove(); }

 private:
  static constexpr uint8_t kInt3 = 0xcc;
  pid_t tid_ = 0;
  uint64_t addr_ = 0;
  uint8_t original_ = 0;
};

/// The address a fault stop `s` names (siginfo_t.si_addr).
uint64_t fault_address(const Stop& s) {
  uint64_t addr = 0;
  std::memcpy(&addr, s.siginfo.data() + 16, sizeof addr);
  return addr;
}

/// Whether `s` is a write fault in one of task `t`'s watched pages (SIGSEGV, SEGV_ACCERR).
bool page_fault(const Stop& s, const ReplayTask& t) {
  if (s.kind != Stop::Signal || s.sig != SIGSEGV || siginfo_code(s.siginfo) != SEGV_ACCERR)
    return false;
  return in_watched_page(t, fault_address(s));
}

/// What store_past_fault did at a write fault.
enum class StoreMade : uint8_t {
  None,   ///< nothing: the instruction is not a plain store of that write
  Quiet,  ///< made the store; no slot fired
  Fired,  ///< made the store; a slot fired (the emulated DR6 tells which)
};

/// At write fault `fault` in a watched page: where the faulting instruction is a plain store
/// (write_insn.h) that stays in its page, makes its write through /proc/PID/mem (which writes
/// read-only pages) and moves `t` past it, as a step with the pages writable would leave it,
/// without the step and the two remote mprotects around it. Its slots are looked at as
/// step_and_look looks at a step of it: the decoded store onto watched bytes fires the slots
/// that watch them, a change of their value fires too, and an execute slot on the next
/// instruction. StoreMade::None, with nothing done, for any other write, and where the page
/// cannot be written so (a shared one). (A hot neighbour of a watched variable, a loop's
/// counter beside it or a stack slot next to a watched local, faults at every pass; the
/// watched variable's own writes are mostly plain stores.)
StoreMade store_past_fault(ReplayTask& t, const Stop& fault) {
  Registers r;
  if (!try_get_regs(t.tid, r)) return StoreMade::None;
  auto store = plain_store(read_memory(t.tid, r.rip, 16), r.rip, r);
  if (!store) return StoreMade::None;
  const uint64_t addr = fault_address(fault), end = store->addr + store->bytes.size();
  if (addr < store->addr || addr >= end) return StoreMade::None;  // not the write that faulted
  if ((store->addr >> 12) != ((end - 1) >> 12)) return StoreMade::None;
  try {
    write_memory(t.tid, store->addr, store->bytes.data(), store->bytes.size());
  } catch (const SystemError&) {
    // A shared page (MAP_SHARED, SysV shared memory): the kernel writes a page that is not
    // writable for a tracer (FOLL_FORCE) by copy-on-write, so in private mappings only.
    return StoreMade::None;  // nothing written: the store stays within one page
  }
  bool on_watch = false;
  for (const SoftWatchRange& w : soft_write_ranges(t.tid))
    on_watch |= store->addr < w.addr + uint64_t(w.len) && w.addr < end;
  const bool stores = on_watch && stores_on_watch(t.tid, r);
  r.rip = store->next;
  set_regs(t.tid, r);
  const bool changed = soft_debug_after_step(t.tid, r.rip, true);
  return stores || changed ? StoreMade::Fired : StoreMade::Quiet;
}

/// At write fault `fault` in a watched page: lets the faulting instruction run (made through
/// /proc/PID/mem, or stepped with the pages writable). Returns the stop that ends the run
/// (a slot fired, another stop, `interrupt` due), or nullopt where it goes on with the pages
/// read-only again.
std::optional<Stop> past_guard_fault(ReplayTask& t, int request, const Stop& fault,
                                     const InterruptWhen& interrupt) {
  switch (store_past_fault(t, fault)) {
    case StoreMade::Fired:
      return single_step_trap();  // as a step of it ends (the task's own stop is the fault)
    case StoreMade::Quiet:
      return std::nullopt;
    case StoreMade::None:
      break;
  }
  // A write to a watched page: let the instruction run with the page writable. It fires
  // by the rules of run_by_steps (a change, a push or a decoded store onto the watched
  // bytes), so that every run of the same code counts the same hits, whichever way it went.
  set_watched_pages_writable(t, true);
  Registers at_fault = registers_or_none(t.tid);
  if (std::optional<Stop> after = step_and_look(t, request, false, 0, interrupt, at_fault))
    return after;
  if (interrupt.any() && interrupt.due()) return interrupted();
  // However hot the pages (a stack page, an interpreter's frame stack), the run stays on
  // faults: one costs a few steps' time, and a run that went on by single steps instead
  // took minutes where it crossed a long stretch that wrote the pages rarely (an
  // interpreter's imports, a spinning thread's loop).
  if (!set_watched_pages_writable(t, false)) return run_by_steps(t, request, false, 0, interrupt);
  return std::nullopt;
}

/// The run of run_with_soft_slots with the watched pages read-only (guard_watched_pages).
Stop guarded_run(ReplayTask& t, int request, int sig, const InterruptWhen& interrupt) {
  for (;;) {
    resume(t.tid, request, sig);
    sig = 0;
    Stop s = wait_stop(t, request, interrupt);
    if (!page_fault(s, t)) return s;  // the pages stay read-only for the next run
    if (std::optional<Stop> end = past_guard_fault(t, request, s, interrupt)) return *end;
    if (interrupt.any() && interrupt.due()) return interrupted();
  }
}

/// The first instruction of a run that starts on the execute slot's instruction, run by one
/// step looked at as run_by_steps looks at each, with the watched pages as they are (where
/// they are read-only, a write to them faults and is let through as in guarded_run): the
/// stop that ends the run, or nullopt.
std::optional<Stop> step_off_exec_slot(ReplayTask& t, int request, int sig,
                                       const InterruptWhen& interrupt) {
  Registers at = registers_or_none(t.tid);
  std::optional<Stop> s = step_and_look(t, request, false, sig, interrupt, at);
  if (s && page_fault(*s, t)) return past_guard_fault(t, request, *s, interrupt);
  return s;
}

}  // namespace

Stop run_with_soft_slots(ReplayTask& t, int request, int sig, const InterruptWhen& interrupt) {
  soft_debug_resync(t.tid);
  bool step = request == PTRACE_SINGLESTEP || request == PTRACE_SYSEMU_SINGLESTEP;
  std::optional<uint64_t> exec = soft_exec_address(t.tid);
  if (step || !t.syscall_insn) {
    release_watched_pages(t);
    return run_by_steps(t, request, step, sig, interrupt);
  }
  ExecTrap trap;
  if (exec) {
    // Standing on the slot's instruction, the task runs it first, as the CPU's slot lets it
    // with the resume flag that the point search sets there.
    Registers at = registers_or_none(t.tid);
    if (at.rip == *exec) {
      if (std::optional<Stop> s = step_off_exec_slot(t, request, sig, interrupt)) return *s;
      sig = 0;
      if (interrupt.any() && interrupt.due()) return interrupted();
    }
    if (!trap.insert(t.tid, *exec)) {  // an int3 there already: the timeline's, or the program's
      release_watched_pages(t);
      return run_by_steps(t, request, false, sig, interrupt);
    }
  }
  Stop s;
  switch (guard_watched_pages(t)) {
    case PageGuard::Guarded:
      s = guarded_run(t, request, sig, interrupt);
      break;
    case PageGuard::NothingWritable:  // nothing the task can write without a syscall first
      resume(t.tid, request, sig);
      s = wait_stop(t, request, interrupt);
      break;
    case PageGuard::Failed:
      s = run_by_steps(t, request, false, sig, interrupt);
      break;
  }
  trap.stopped_by(s);
  trap.remove();
  // A CLONE_VM child's memory is its parent's too: its guard lasts one run.
  if (t.vm_parent) release_watched_pages(t);
  if (s.kind == Stop::Exited) watched_pages_task_ended(t);
  return s;
}

}  // namespace rwd
