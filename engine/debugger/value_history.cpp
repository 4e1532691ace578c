#include "engine/debugger/value_history.h"

#include <algorithm>
#include <map>
#include <optional>

#include "engine/debugger/history_support.h"
#include "engine/errors.h"
#include "engine/symbols/call_stack.h"
#include "engine/symbols/value.h"
#include "engine/symbols/value_diff.h"

namespace rwd {

namespace {

/// The x86-64 red zone below the stack pointer that a leaf function may use (System V ABI,
/// §3.2.2), bytes.
constexpr uint64_t kRedZone = 128;

/// The frame whose stack slot a value lives in: its canonical frame address, function and
/// the function's entry (runtime address; 0 when unknown).
struct OwningFrame {
  uint64_t cfa = 0;
  std::string function;
  uint64_t entry = 0;
};

/// The frame of task `tid` whose stack holds `addr`; nullopt when `addr` is not on that
/// task's stack at the current point.
std::optional<OwningFrame> owning_frame(Debugger& d, pid_t tid, uint64_t addr) {
  uint64_t rsp = d.target(tid).registers(tid).rsp;
  if (addr + kRedZone < rsp) return std::nullopt;
  for (const StackFrame& f : d.stack(tid)) {
    if (f.inlined || !f.cfa || addr >= f.cfa) continue;
    OwningFrame o{f.cfa, f.function, 0};
    if (f.fn && f.module) o.entry = f.module->to_runtime(f.fn->entry);
    return o;
  }
  return std::nullopt;
}

/// Whether task `tid`'s stack (at `d`'s current point) still holds frame (cfa, function).
bool frame_alive(Debugger& d, pid_t tid, uint64_t cfa, const std::string& function) {
  try {
    for (const StackFrame& f : d.stack(tid))
      if (f.cfa == cfa && f.function == function) return true;
  } catch (const Error&) {
  }
  return false;
}

/// Names the code at runtime address `pc` of the process `d` stands in: function, file and
/// line. Reloads the modules once when no module holds it (a library mapped since).
void describe_code(Debugger& d, uint64_t pc, ValueChange& c) {
  Module* m = d.modules().module_at(pc);
  if (!m) {
    d.refresh();
    m = d.modules().module_at(pc);
  }
  if (!m) return;
  uint64_t link = m->to_link(pc);
  if (DwarfIndex* dw = m->dwarf())
    if (const FunctionInfo* fn = dw->function_at(link)) c.function = fn->name;
  if (c.function.empty())
    if (const Symbol* s = m->function_at(link)) c.function = s->demangled;
  if (auto line = source_line_at(d.modules(), pc)) {
    c.file = line->file;
    c.line = line->line;
  }
}

}  // namespace

ValueHistory HistoryQuery::run(Debugger& d, const HistoryRequest& req,
                               const QueryProgress& progress) {
  ValueHistory h;
  h.watched = d.watchable(req.tid, req.frame, req.expression);
  h.pid = TaskProcesses(d.timeline()).pid_of(req.tid);
  if (req.frame >= d.stack(req.tid).size())
    throw Error("no frame " + std::to_string(req.frame) + " in task " + std::to_string(req.tid));
  // A stack variable belongs to one call: its writes count while that call's frame lives,
  // and calls before or after it that put a frame at the same address (a loop calling the
  // function again) are told apart at their entries.
  std::optional<OwningFrame> scope = owning_frame(d, req.tid, h.watched.addr);
  if (scope) h.frame_function = scope->function.empty() ? "??" : scope->function;
  std::optional<CodeSite> entry_site;
  if (scope && scope->entry) entry_site = d.timeline().code_site(req.tid, scope->entry);
  // Where the question is asked, for a stack local only (a position between events costs a
  // digest of the process's memory).
  TimelinePosition here;
  std::optional<CodeSite> here_site;
  if (entry_site) {
    here = d.timeline().position();
    here_site = position_site(d.timeline(), here);
  }

  Run run(*this, req.first_event, req.last_event, progress);
  Timeline& tl = run.timeline();
  Debugger qd(tl);
  FormatOptions format = symbolizing_options(qd.modules());
  ScopedWatch watch(tl, h.watched, false);
  if (entry_site) tl.add_breakpoint(*entry_site);
  // The calls that made the frame again, and how many of them entered before the point the
  // question was asked at (the last of those is the call asked about).
  size_t calls = 0, calls_before = 0;
  std::vector<size_t> call_of;  // per change: how many such calls came before it
  std::optional<PositionSplit> split;
  if (entry_site) split.emplace(tl, here, here_site, entry_site);
  TaskProcesses processes(tl);
  while (auto stop = run.next(h.changes.size())) {
    const StopInfo& s = *stop;
    bool after = split && split->after(s);
    if (entry_site && s.reason == StopReason::Breakpoint && s.tid == req.tid &&
        s.addr == scope->entry && tl.registers(s.tid).rsp + 8 == scope->cfa) {
      ++calls;  // the return address is pushed: the frame's address is set
      if (!after) calls_before = calls;
    }
    if (s.reason != StopReason::Watchpoint || s.addr != h.watched.addr) continue;
    uint32_t ordinal = run.count();
    if (s.old_value == s.new_value || processes.pid_of(s.tid) != h.pid) continue;
    if (scope) qd.refresh();  // the stack is read at this point
    if (scope && !frame_alive(qd, req.tid, scope->cfa, scope->function)) continue;
    ValueChange c;
    c.event = s.event;
    c.ordinal = ordinal;
    c.tid = s.tid;
    c.pc = tl.registers(s.tid).rip;
    // The stop is just after the writing instruction: its last byte names its line.
    describe_code(qd, c.pc - 1, c);
    ChangeText text =
        describe_change(h.watched.value_type, s.old_value, s.new_value, qd.target(s.tid), format);
    c.member = std::move(text.member);
    c.old_value = std::move(text.old_value);
    c.new_value = std::move(text.new_value);
    c.new_bytes = s.new_value;
    h.changes.push_back(std::move(c));
    call_of.push_back(calls);
  }
  if (entry_site) {
    // The call the query was made in: the last one to enter before the current point.
    std::vector<ValueChange> kept;
    for (size_t i = 0; i < h.changes.size(); ++i)
      if (call_of[i] == calls_before) kept.push_back(std::move(h.changes[i]));
    h.changes = std::move(kept);
  }
  h.reached_event = run.reached();
  h.complete = run.complete();
  h.truncated = run.truncated();
  return h;
}

DebugStop step_to_change(Debugger& d, const WatchInfo& w, pid_t tid, Direction dir) {
  Timeline& tl = d.timeline();
  DebugStop out;
  {
    SessionWatch watch(d, w);
    TaskProcesses processes(tl);
    pid_t pid = processes.pid_of(tid);
    for (;;) {
      out.stop = dir == Direction::Forward ? tl.resume_forward()
                                           : tl.resume_backward(Timeline::WatchStop::AfterWrite);
      const StopInfo& s = out.stop;
      if (run_ended(s)) break;
      if (s.reason == StopReason::Watchpoint && s.addr == w.addr && s.old_value != s.new_value &&
          processes.pid_of(s.tid) == pid)
        break;
    }
  }
  d.refresh();
  return out;
}

DebugStop go_to_change(Debugger& d, const ValueHistory& h, const ValueChange& c) {
  Timeline& tl = d.timeline();
  DebugStop out;
  const bool elsewhere = c.written_addr != 0;
  WatchInfo w = h.watched;
  if (elsewhere) w = {c.written_addr, c.written_len, h.watched.type, nullptr};
  {
    SessionWatch watch(d, w);
    out.stop = find_counted_stop(tl, c.event, c.ordinal, [&](const StopInfo& s) {
      return s.reason == StopReason::Watchpoint && s.addr == w.addr &&
             (!elsewhere || (h.counts_elsewhere && h.counts_elsewhere(tl, s)));
    });
  }
  d.refresh();
  const StopInfo& at = out.stop;
  if (at.reason != StopReason::Watchpoint || at.addr != w.addr || at.tid != c.tid ||
      at.event != c.event || at.new_value != c.new_bytes)
    throw Error("the replay did not find the write of event " + std::to_string(c.event) +
                " again (it stopped at event " + std::to_string(out.stop.event) + ")");
  if (h.settle)
    if (std::optional<StopInfo> there = h.settle(d, at)) out.stop = *there;
  return out;
}

}  // namespace rwd
