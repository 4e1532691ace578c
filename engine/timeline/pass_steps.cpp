// Reverse steps from a point far from the task's last event (DESIGN.md: "the cost of a
// backward operation must not grow with the number of instructions since the last event").
// Three replays from the same checkpoint: the first counts the task's passes at the point's
// instruction up to the point, in the task itself (a counting trampoline, pass_trap.h); the
// second single-steps from the pass before it to the point, counting the steps; the third
// stops one step earlier. The single steps cover one pass of a loop, not the whole stretch
// since the last syscall.
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "engine/arch/displaced_code.h"
#include "engine/arch/insn.h"
#include "engine/arch/write_insn.h"
#include "engine/errors.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/symbols/elf_image.h"
#include "engine/ticks/memory_digest.h"
#include "engine/timeline/replay_controller.h"
#include "preload/rewind_preload_abi.h"

namespace rwd {

std::optional<ReplayController::PassWant> ReplayController::pass_want() const {
  if (auto* scan = run_.as<runs::Scan>(); scan && (scan->count_passes || scan->find_by_trap)) {
    if (scan->count_at)  // its patch covers that one instruction, up to the target's
      return PassWant{.tid = scan->target.tid,
                      .event = scan->target.event,
                      .x = scan->count_at,
                      .reach = scan->count_len,
                      .checks = {.registers = false, .stop_at = 0, .move_call = true}};
    return PassWant{.tid = scan->target.tid,
                    .event = scan->target.event,
                    .x = scan->target.regs.rip,
                    .checks = {.registers = true,
                               .stop_at = 0,
                               .stack_words = scan->stack_words,
                               .move_call = true},
                    .want = scan->target.regs};
  }
  if (const StepCount* c = run_.step_count(); c && c->after_pass)
    return PassWant{.tid = c->tid,
                    .event = c->event,
                    .x = c->pass_addr,
                    .reach = c->pass_len ? c->pass_len : PassTrap::kPatchReach,
                    .checks = {.registers = false, .stop_at = c->after_pass, .move_call = true}};
  return std::nullopt;
}

namespace {

/// The runtime address and size of librewind_preload.so's .symtab symbol `name` in `maps`,
/// placed through the mapping that holds its file offset; nullopt when the library's file or
/// the symbol is not found.
std::optional<std::pair<uint64_t, uint64_t>> preload_symbol(const std::vector<ProcMapping>& maps,
                                                            std::string_view name) {
  for (const ProcMapping& m : maps) {
    if (!is_preload_library(m.path)) continue;
    std::unique_ptr<ElfImage> elf;
    try {
      elf = ElfImage::open(strip_deleted_suffix(m.path));
    } catch (const Error&) {
      return std::nullopt;
    }
    for (const ElfSymbol& sym : elf->symbols()) {
      if (sym.name != name) continue;
      const std::optional<uint64_t> at = elf->file_offset(sym.value);
      if (!at) return std::nullopt;
      for (const ProcMapping& n : maps)
        if (n.path == m.path && *at >= n.offset && *at < n.offset + (n.end - n.start))
          return std::pair{n.start + (*at - n.offset), sym.size};
      return std::nullopt;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

/// The runtime range [lo, hi) of librewind_preload.so's stub area in `maps` when `x` lies in
/// the library's mappings: its .symtab symbol rwd_stub_area, sized to the area
/// (rewind_preload_abi.h). {0, 0} when `x` is outside the library, or its file or the symbol
/// is not found. The library's file is read only in the first case.
std::pair<uint64_t, uint64_t> preload_stub_area(const std::vector<ProcMapping>& maps, uint64_t x) {
  const auto [lib_lo, lib_hi] = preload_library_range(maps);
  if (x < lib_lo || x >= lib_hi) return {0, 0};
  auto area = preload_symbol(maps, "rwd_stub_area");
  if (!area || area->second == 0) return {0, 0};
  return {area->first, area->first + area->second};
}

/// Whether code near `addr` in process `pid` (mapped as `maps`; read through its task `tid`;
/// up to `before` bytes before it, 16 after) holds
/// a `jmp rel32` into librewind_preload.so: a syscall site the library patched
/// (preload/patch.c). A counting trampoline there would be in place before the site is
/// patched when a replay starts from an earlier checkpoint: the library would then not know
/// the site, and the replay would diverge. A stray 0xe9 byte only costs the faster method.
bool near_patched_site(const std::vector<ProcMapping>& maps, pid_t pid, pid_t tid, uint64_t addr,
                       uint64_t before, const BreakpointTable& bps) {
  const auto [lo, hi] = preload_library_range(maps);
  if (hi == 0) return false;
  constexpr uint8_t kJmpRel32 = 0xe9;
  std::vector<uint8_t> code = rwd::read_memory(tid, addr - before, before + 16);
  bps.hide(pid, addr - before, code);
  for (size_t i = 0; i + 5 <= code.size(); ++i) {
    if (code[i] != kJmpRel32) continue;
    int32_t rel = 0;
    std::memcpy(&rel, &code[i + 1], sizeof rel);
    uint64_t target = addr - before + i + 5 + uint64_t(int64_t(rel));
    if (target >= lo && target < hi) return true;
  }
  return false;
}

/// How far back pass_scan_done() may move the count to an earlier instruction (bytes).
constexpr uint64_t kBack = 96;

}  // namespace

bool ReplayController::reverse_steps_forced() {
  const char* method = getenv("REWIND_REVERSE_STEP");
  return method && std::strcmp(method, "steps") == 0;
}

std::optional<runs::Scan> ReplayController::pass_count_scan() {
  if (reverse_steps_forced()) return std::nullopt;
  if (here_.kind != Point::Trap || here_.tid != step_tid_) return std::nullopt;
  const ReplayTask* t = live(here_.tid);
  if (!t) return std::nullopt;
  // Inside the code a reverse step skips: the steps from the last event pass the point
  // before it (Run::landing), which a count from the pass before may not.
  if (skip_hi_ && here_.regs.rip >= skip_lo_ && here_.regs.rip < skip_hi_) return std::nullopt;
  // After buffered syscalls in this interval, the steps count from the last one's pause,
  // which lies after the event and most often after the pass before the point's.
  uint32_t pos = buffer_pos(here_.tid);
  if (pos > 0) return std::nullopt;
  if (!trap_may_find(*t, here_, false)) return std::nullopt;
  runs::Scan scan;
  scan.stack_words = stack_words_at(*t, here_.regs.rsp);
  scan.target = here_;
  set_point_digests(scan.target, *t);
  if (debug_) target_report_ = digest_report(t->tid, live_memory_of(*t).dead);
  scan.count_passes = true;
  StepCount c{.tid = here_.tid, .event = here_.event, .pos = pos};
  pass_fallback_ = runs::Scan{.target = scan.target, .steps = c};
  steps_inner_ = 0;
  pass_first_ = scan;
  return scan;
}

std::optional<Next> ReplayController::start_pass_scan() {
  std::optional<runs::Scan> scan = pass_count_scan();
  if (!scan) return std::nullopt;
  // Counted from the nearest checkpoint known to lie before the point in its interval, if
  // any: the three replays then cover the stretch since that checkpoint only.
  pass_inner_ = usable_inner(here_inner_, here_.regs);
  steps_inner_ = *pass_inner_;
  if (debug_)
    fprintf(stderr, "rewind: timeline: reverse step by passes at %llx, event %llu, from %llu\n",
            (unsigned long long)here_.regs.rip, (unsigned long long)here_.event,
            (unsigned long long)*pass_inner_);
  after_ = After::ReverseStep;
  run_ = Run(std::move(*scan));
  run_.inner = *pass_inner_;
  // Most of the stretch from that checkpoint runs without the trampoline (Run::arm_after).
  run_.arm_after = late_arm(inner_.find(*pass_inner_), here_replay_, here_cost_);
  return Next::Replay;
}

bool ReplayController::trap_may_find(const ReplayTask& t, const Point& target,
                                     bool no_breakpoints) {
  const uint64_t x = target.regs.rip;
  const std::vector<ProcMapping> maps = read_proc_maps(t.pid);
  if (near_patched_site(maps, t.pid, t.tid, x, kBack, bps_)) return false;
  std::vector<uint8_t> code = rwd::read_memory(t.tid, x, 16);
  bps_.hide(t.pid, x, code);
  // A string instruction's passes at its address are its iterations, which a moved copy
  // runs without coming back there.
  if (code.empty() || rep_string_insn_length(code.data(), code.size()) > 0) return false;
  if (no_breakpoints)
    for (auto& [rec, other] : session_->tasks())
      for (uint64_t a = x; other.state != TaskState::Exited && a < x + PassTrap::kPatchReach; ++a)
        if (bps_.has(other.pid, a)) return false;
  return true;
}

std::vector<uint64_t> ReplayController::stack_words_at(const ReplayTask& t, uint64_t rsp) {
  std::vector<uint64_t> words;
  for (const ProcMapping& m : read_proc_maps(t.pid)) {
    if (rsp < m.start || rsp >= m.end) continue;
    words.resize(std::min<uint64_t>(16, (m.end - rsp) / 8));
    if (!words.empty()) read_memory_exact(t.tid, rsp, words.data(), words.size() * 8);
    break;
  }
  return words;
}

std::chrono::milliseconds ReplayController::arm_share(double from_ms, double to_ms) {
  auto ms = std::chrono::milliseconds(0);
  if (to_ms > from_ms) ms = std::chrono::milliseconds(long((to_ms - from_ms) * kArmShare));
  return ms < kLateArmMin ? std::chrono::milliseconds(0) : ms;
}

std::chrono::milliseconds ReplayController::late_arm(const Saved* from, uint64_t replay,
                                                     double cost_ms) const {
  return from && from->replay == replay ? arm_share(from->cost_ms, cost_ms)
                                        : std::chrono::milliseconds(0);
}

std::chrono::milliseconds ReplayController::late_arm_from_event(const Saved* from,
                                                                double cost_ms) const {
  return from && !from->between ? arm_share(from->cost_ms, cost_ms) : std::chrono::milliseconds(0);
}

uint64_t ReplayController::usable_inner(uint64_t id, const Registers& point) const {
  for (const Saved* s = inner_.find(id); s; s = inner_.find(s->prev))
    if (!registers_equal(s->regs, point)) return s->id;
  return 0;
}

uint64_t ReplayController::direct_call_site(const ReplayTask& t, const Registers& point,
                                            const std::vector<ProcMapping>& maps) {
  // At a function's first instruction, the return address is the word at rsp; a direct call
  // (e8 rel32) just before it that aims at the point ran just before the point.
  std::vector<uint8_t> word = rwd::read_memory(t.tid, point.rsp, 8);
  if (word.size() != 8) return 0;
  uint64_t ret = 0;
  std::memcpy(&ret, word.data(), 8);
  std::vector<uint8_t> call = rwd::read_memory(t.tid, ret - 5, 32);
  bps_.hide(t.pid, ret - 5, call);
  if (call.size() != 32 || call[0] != 0xe8) return 0;
  int32_t rel = 0;
  std::memcpy(&rel, &call[1], 4);
  if (ret + uint64_t(int64_t(rel)) != point.rip) return 0;
  auto plan = plan_point_trampoline(PatchKind::Count, call, ret - 5, Registers{}, maps,
                                    proc_brk_start(t.pid), PassChecks{.move_call = true});
  // Its patch (the call itself) must not cover the point, where the breakpoint goes.
  if (!plan || (point.rip >= ret - 5 && point.rip < ret - 5 + plan->patch.size())) return 0;
  if (debug_)
    fprintf(stderr, "rewind: timeline: the point's first pass follows the call at %llx\n",
            (unsigned long long)(ret - 5));
  return ret - 5;
}

uint64_t ReplayController::library_jump_site(const ReplayTask& t,
                                             const std::vector<ProcMapping>& maps) {
  // The library's own calls reach the stub by one jump (preload/entry.S rwd_library_jump,
  // `jmp *%r11`), which leaves no trace to decode backwards from the stub: the instructions
  // before it on the page are padding. The jump ran just before the point; its passes are
  // counted instead, as a direct call's (direct_call_site).
  auto site = preload_symbol(maps, "rwd_library_jump");
  if (!site) return 0;
  const uint64_t at = site->first;
  std::vector<uint8_t> code = rwd::read_memory(t.tid, at, 32);
  bps_.hide(t.pid, at, code);
  static const uint8_t kJumpR11[] = {0x41, 0xff, 0xe3};
  if (code.size() != 32 || !std::equal(std::begin(kJumpR11), std::end(kJumpR11), code.begin()))
    return 0;
  auto plan = plan_point_trampoline(PatchKind::Count, code, at, Registers{}, maps,
                                    proc_brk_start(t.pid), PassChecks{});
  if (!plan) return 0;
  if (debug_)
    fprintf(stderr, "rewind: timeline: the point's first pass follows the jump at %llx\n",
            (unsigned long long)at);
  return at;
}

Next ReplayController::pass_scan_done(const Run& done) {
  const runs::Scan& scan = *done.as<runs::Scan>();
  const uint64_t x = scan.target.regs.rip;
  const ReplayTask* t = live(scan.target.tid);
  uint64_t passes = done.passes;
  if (pass_trap_.installed()) {  // found by the breakpoint at the target's instruction
    passes = t ? pass_trap_.passes(t->tid) : 0;
    pass_trap_.remove();
  }
  if (debug_)
    fprintf(stderr, "rewind: timeline: %llu passes at %llx up to the point\n",
            (unsigned long long)passes, (unsigned long long)(scan.count_at ? scan.count_at : x));
  if (!scan.count_at && passes == 1 && t) {
    // The point is the task's first pass at its instruction since its last event. The
    // instructions before it in the code (each able to go on to the next) most often ran just
    // before: count the passes of the nearest one that leaves room for the jump before the
    // point's instruction (the breakpoint there stays outside the patch), and whose
    // instructions can be moved, up to the point, found by that breakpoint (its first pass
    // is the point).
    std::vector<uint8_t> code = rwd::read_memory(t->tid, x - kBack, kBack);
    bps_.hide(t->pid, x - kBack, code);
    const std::vector<ProcMapping> maps = read_proc_maps(t->pid);
    const uint64_t heap_start = proc_brk_start(t->pid);
    uint64_t call = direct_call_site(*t, scan.target.regs, maps);
    if (!call && x == RWD_PRIVILEGED_TRACED_INSN) call = library_jump_site(*t, maps);
    uint64_t end = x, chosen = call, nearest = 0;
    // Not in librewind_preload.so's stub area: each stub keeps its site's address (data)
    // just before the next stub's code, which decoding backwards reads as instructions; a
    // jump patched over a start found there broke the code before the stub (SIGILL). The
    // library's own code is compiled code like any other: its start-up scan of libc's text
    // runs millions of instructions, which the steps of a fall-back would single-step.
    const auto [stubs_lo, stubs_hi] = preload_stub_area(maps, x);
    const bool in_stubs = x >= stubs_lo && x < stubs_hi;
    for (int n = 0; n < 8 && !chosen && !in_stubs && code.size() == kBack; ++n) {
      std::vector<uint8_t> before(code.begin(), code.end() - long(x - end));
      auto y = insn_before(end, before);
      if (!y) break;
      end = *y;
      if (x - end < 5) continue;  // the jump would cover the point's instruction
      if (!nearest) nearest = end;
      std::vector<uint8_t> at = rwd::read_memory(t->tid, end, 32);
      bps_.hide(t->pid, end, at);
      auto plan = at.size() == 32 ? plan_point_trampoline(PatchKind::Count, at, end, Registers{},
                                                          maps, heap_start, PassChecks{})
                                  : std::nullopt;
      // Not movable: one further back (with checkpoints inside intervals only, as they are:
      // an ASan CI run failed a reverse step into printf once with it always on). When none
      // further back is, the nearest one is counted as without them: falling back to steps
      // from the event would single-step the whole stretch (gdb.sh's `far` session hung).
      if (inner_on_ && (!plan || plan->patch.size() > x - end)) continue;
      chosen = end;
      break;
    }
    if (!chosen) chosen = nearest;
    if (chosen) {
      end = chosen;
      runs::Scan again = scan;
      again.count_at = end;
      again.count_len = call ? 5 : x - end;  // the patch: the call, or up to the point
      arm_internal(site_in(t->pid, x));
      run_ = Run(again);
      run_.start_event = done.start_event;
      run_.inner = done.inner;
      return Next::Replay;
    }
  }
  // The point's own pass is the last one counted at its instruction, not at the one before.
  uint64_t before = scan.count_at ? passes : (passes > 0 ? passes - 1 : 0);
  if (before == 0) {
    return pass_fall_back("no pass to start the steps from");
  }
  StepCount c{.tid = scan.target.tid,
              .event = scan.target.event,
              .after_pass = before,
              .pass_addr = scan.count_at ? scan.count_at : x,
              .pass_len = scan.count_at ? scan.count_len : 0};
  run_ = Run(runs::Scan{.target = scan.target, .steps = c});
  run_.start_event = done.start_event;
  run_.inner = done.inner;
  return Next::Replay;
}

Next ReplayController::install_pass_trap(ReplayTask& t) {
  auto w = pass_want();
  if (!w || pass_trap_.installed() || run_.pass_reached || t.rec_tid != w->tid ||
      session_->events_done() != w->event)
    return Next::Resume;
  // A late trampoline goes in later (Run::arm_after; before_resume has the replay
  // interrupted then).
  if (std::chrono::steady_clock::now() < trap_not_before_) return Next::Resume;
  if (auto* scan = run_.as<runs::Scan>();
      scan && scan->count_passes && run_.arm_after.count() > 0 && !run_.late_from) {
    // Its passes count from here: a checkpoint here, which the next replays of this
    // reverse step start from.
    uint64_t id = take_inner_checkpoint(t, true);
    if (!id) return rearm_late_trap("no checkpoint where the late counting trampoline goes");
    if (!bps_.empty()) sync_breakpoints(t);  // the copy took them out
    if (debug_)
      fprintf(stderr,
              "rewind: timeline: passes counted from checkpoint %llu, taken after %lld ms\n",
              (unsigned long long)id, (long long)run_.arm_after.count());
    run_.late_from = run_.inner;
    run_.inner = id;
    pass_inner_ = id;
  }
  // Not while a signal waits for the task's next resume: the mmap run in the task to make
  // the trampoline's page would deliver it. Nor where the task stands in the bytes to patch:
  // its first pass there would be the point just after the event, whose state (orig_rax
  // after a syscall) a trap in the trampoline does not keep.
  // (A task that a checkpoint inside the interval left there is not just after an event: at
  // the patch's jump it enters the trampoline, and inside it traps into the moved copy.)
  uint64_t rip = get_regs(t.tid).rip;
  bool standing = rip >= w->x && rip < w->x + w->reach && !start_inner_;
  if (!standing && t.resume_sig == 0 && !t.signal_injected && !t.restart_pending) {
    std::vector<uint8_t> code = rwd::read_memory(t.tid, w->x, 32);
    bps_.hide(t.pid, w->x, code);
    try {
      if (code.size() == 32 && pass_trap_.install(t, w->x, code, w->want, w->checks, w->reach)) {
        if (run_.arm_after.count() > 0) {
          auto rest = std::chrono::duration<double, std::milli>(run_.arm_after) *
                      ((1 - kArmShare) / kArmShare) * kArmedSlowdown;
          trap_give_up_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(100) +
                          std::chrono::duration_cast<std::chrono::milliseconds>(rest);
        }
        if (debug_)
          fprintf(stderr, "rewind: timeline: counting trampoline at %llx, task at %llx\n",
                  (unsigned long long)w->x, (unsigned long long)get_regs(t.tid).rip);
        return Next::Resume;
      }
    } catch (const Error& e) {
      // The task did not run the mmap as asked: this replay is thrown away (below).
      pass_trap_.abandon();
      if (debug_) fprintf(stderr, "rewind: timeline: counting trampoline: %s\n", e.what());
    }
  }
  if (auto* scan = run_.as<runs::Scan>(); scan && scan->find_by_trap) {
    // A reverse continue's target: found by a breakpoint at its instruction instead, from
    // this resume on.
    if (debug_) fprintf(stderr, "rewind: timeline: no trampoline at the target: a breakpoint\n");
    scan->find_by_trap = false;
    arm_internal(site_in(t.pid, scan->target.regs.rip));
    sync_breakpoints(t);
    return Next::Resume;
  }
  return pass_fall_back("no counting trampoline at the instruction");
}

void ReplayController::settle_for_trap(ReplayTask& t) {
  const Event* next = session_->next_event();
  if (!run_.forward() || !watches_.empty() || !next || next->kind == EventKind::Signal) return;
  Registers r;
  if (!try_get_regs(t.tid, r)) return;
  const uint64_t from = r.rip;
  for (size_t steps = 0;; ++steps) {
    if (bps_.patched(t.pid, r.rip)) return;  // never step onto a breakpoint
    std::vector<uint8_t> code = rwd::read_memory(t.tid, r.rip, 32);
    bps_.hide(t.pid, r.rip, code);
    auto probe = displace_instructions(code.data(), code.size(), r.rip, r.rip, 5, false);
    if (probe && probe->boundaries.empty()) {
      if (debug_ && steps)
        fprintf(stderr, "rewind: timeline: pause moved %zu instructions on, %llx to %llx\n", steps,
                (unsigned long long)from, (unsigned long long)r.rip);
      return;
    }
    if (steps == kSettleSteps || !plain_to_step(code, r.rip)) return;
    if (!resume(t.tid, PTRACE_SINGLESTEP)) return;
    int status = wait_task(t.tid);
    // A fault stays where it was (the instruction runs again, and faults, when resumed).
    if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) return;
    if ((take_debug_status(t.tid) & 0xf) || !try_get_regs(t.tid, r)) return;
  }
}

Next ReplayController::pass_fall_back(const char* why) {
  if (pass_inner_ && *pass_inner_ && pass_first_) {
    // Counted from a checkpoint inside the interval: count again from an earlier one, or
    // from the event's.
    const Saved* s = inner_.find(*pass_inner_);
    pass_inner_ = s ? usable_inner(s->prev, pass_first_->target.regs) : 0;
    if (debug_)
      fprintf(stderr, "rewind: timeline: %s: passes from %llu\n", why,
              (unsigned long long)*pass_inner_);
    run_ = Run(*pass_first_);
    run_.inner = *pass_inner_;
    after_ = After::ReverseStep;
    return Next::Replay;
  }
  // Steps from the nearest checkpoint known to lie before the point, the event's where
  // there is none: from the event, a point millions of instructions into its interval
  // (ld.so's or the preload library's scans of a library's code) took minutes to reach.
  if (debug_)
    fprintf(stderr, "rewind: timeline: %s: steps from %s %llu\n", why,
            steps_inner_ ? "checkpoint" : "the event",
            (unsigned long long)(steps_inner_ ? steps_inner_ : pass_fallback_->target.event));
  run_ = Run(*pass_fallback_);
  run_.inner = steps_inner_;
  after_ = After::ReverseStep;
  return Next::Replay;
}

std::optional<Next> ReplayController::on_pass_trap(ReplayTask& t, Registers r) {
  if (!pass_trap_.installed() || t.pid != pass_trap_.pid()) return std::nullopt;
  uint64_t go_on = 0;
  PassTrap::Trap kind = pass_trap_.classify(r.rip, go_on);
  if (debug_ && kind != PassTrap::Trap::None)
    fprintf(stderr, "rewind: timeline: counting trampoline trap %d at %llx, pass %llu\n", int(kind),
            (unsigned long long)r.rip, (unsigned long long)pass_trap_.passes(t.tid));
  switch (kind) {
    case PassTrap::Trap::None:
      return std::nullopt;
    case PassTrap::Trap::Entered:
      if (auto n = window_end_miss()) return n;
      r.rip = go_on;
      set_regs(t.tid, r);
      return Next::Resume;
    case PassTrap::Trap::Match: {
      // The registers as at the instruction, the trampoline's rip aside.
      r.rip = pass_trap_.point();
      set_regs(t.tid, r);
      auto* scan = run_.as<runs::Scan>();
      if (scan && (scan->count_passes || scan->find_by_trap) && t.rec_tid == scan->target.tid &&
          session_->events_done() == scan->target.event &&
          reached(scan->target, trap_point(t, r))) {
        run_.passes = pass_trap_.passes(t.tid);
        pass_trap_.remove();
        return scan_done();
      }
      if (auto n = window_end_miss()) return n;
      r.rip = go_on;  // same registers, other memory: on through the moved instructions
      set_regs(t.tid, r);
      return Next::Resume;
    }
    case PassTrap::Trap::Count: {
      // The pass the steps start after: the trampoline goes, the steps count from here.
      r.rip = pass_trap_.point();
      set_regs(t.tid, r);
      pass_trap_.remove();
      run_.pass_reached = true;
      // The steps count from here: a checkpoint here makes the last replay of this reverse
      // step, and the counts of the next one, short.
      pass_pre_ = take_inner_checkpoint(t, true);
      if (auto* steps = run_.as<runs::Steps>(); steps && steps->count == 0)
        return pause(steps->report, trap_point(t, r));
      return Next::Resume;
    }
  }
  return std::nullopt;
}

}  // namespace rwd
