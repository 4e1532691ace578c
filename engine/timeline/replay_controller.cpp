// The replay controller's core: the replay thread and its hand-off with the caller, the
// replay loop over events, and forward operations (replay_controller.h).
#include "engine/timeline/replay_controller.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <cstdio>
#include <utility>

#include "engine/arch/clone_args.h"
#include "engine/arch/syscall_table.h"
#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"

namespace rwd {

ReplayController::ReplayController(std::string dir) {
  opts_.trace_dir = std::move(dir);
  opts_.echo_output = false;
  opts_.on_output = [this](uint64_t event, OutputStream stream, const std::string& bytes) {
    if (event <= output_shown_) return;
    output_shown_ = event;
    std::lock_guard lock(listener_mu_);
    if (output_listener_) output_listener_(stream, bytes);
  };
  thread_.start([this] { main(); });
}

ReplayController::~ReplayController() {
  thread_.shut_down();
}

Next ReplayController::op_forward() {
  hit_origin_.reset();
  interrupt_ = false;
  if (divert_resume(false)) return Next::Resume;
  run_ = Run(runs::Forward{});
  return Next::Resume;
}

Next ReplayController::op_step(pid_t tid) {
  hit_origin_.reset();
  interrupt_ = false;
  if (divert_resume(true)) return Next::Resume;
  run_ = Run(runs::StepInsn{.tid = tid});
  return Next::Resume;
}

Next ReplayController::op_seek(uint64_t event) {
  hit_origin_.reset();
  end_diversion();
  run_ = Run(runs::Goto{.target = {.kind = Point::Between, .event = event},
                        .report = {.reason = StopReason::Seek}});
  // An earlier event needs a new replay; a later one is on from here, forwards, unless a
  // checkpoint lies between here and there (a new replay starts from the latest before it).
  uint64_t now = session_->events_done();
  const Saved* nearer = checkpoints_.latest_at_most(event);
  return event <= now || (nearer && nearer->event > now) ? Next::Replay : Next::Resume;
}

void ReplayController::main() {
  RegisterCacheScope registers;  // this thread runs its tracees one at a time
  run_ = Run(runs::Goto{.target = {.kind = Point::Between, .event = 1},
                        .report = {.reason = StopReason::TraceStart}});
  for (;;) {
    Next next;
    try {
      next = replay();
    } catch (const std::exception& e) {
      session_.reset();
      thread_.fail(e.what());
      return;
    }
    if (next == Next::Shutdown) {
      end_diversion();
      checkpoints_.clear();
      session_.reset();
      return;
    }
  }
}

Next ReplayController::at_start_point(const CheckpointStore::Saved& from) {
  const ReplayTask* t = live(from.tid);
  if (auto* steps = run_.as<runs::Steps>()) {
    // No step to make from this checkpoint (the steps were counted from it, pass_fall_back):
    // the point is the checkpoint's own.
    const StepCount& c = steps->from;
    if (t && steps->count == 0 && c.tid == from.tid && c.event == from.event && c.pos == 0 &&
        !c.after_hit && !c.after_pass)
      return pause(steps->report, trap_point(*t, get_regs(t->tid)));
    return Next::Resume;
  }
  auto* go = run_.as<runs::Goto>();
  if (!go || !t || go->target.kind != Point::Trap || go->target.event != from.event ||
      go->target.tid != from.tid || !registers_equal(go->target.regs, from.regs))
    return Next::Resume;
  return pause(go->report, trap_point(*t, get_regs(t->tid)));
}

Next ReplayController::replay() {
  pass_trap_.abandon();  // in the replay thrown away
  run_.passes = 0;
  run_.pass_reached = false;
  session_.reset();
  bps_.forget_all();
  lifted_ = false;
  watches_.restart();  // new tasks: nothing armed
  run_.hits = 0;
  run_.hits_at.clear();
  run_.trap_misses = 0;
  run_.steps = 0;
  paused_at_pos_ = false;
  resumed_in_.clear();
  rep_step_tid_.reset();
  const Saved* from = start_for(run_);
  run_.start_event = from ? from->event : 0;
  ++replays_;
  start_inner_ = from && from->between ? from->id : 0;
  pass_pre_ = 0;
  inner_starts_ += start_inner_ != 0;
  if (debug_)
    fprintf(stderr, "rewind: timeline: replay (run %d) from event %llu (%zu checkpoints)\n",
            int(run_.kind.index()), (unsigned long long)run_.start_event, checkpoints_.size());
  session_ = from ? std::make_unique<ReplaySession>(opts_, *from->checkpoint)
                  : std::make_unique<ReplaySession>(opts_);
  checkpoints_.begin_replay(from);
  // Processes of the checkpoint that share memory (CLONE_VM): their patches are one set, as
  // when the replay saw the clone.
  for (const auto& [rec, t] : session_->tasks())
    if (t.state != TaskState::Exited && t.vm_parent && t.tid == t.pid)
      if (const ReplayTask* p = live_by_tid(t.vm_parent)) bps_.share(t.pid, p->pid);
  note_processes();
  entry_pending_.clear();
  last_entry_event_ = 0;
  if (const StepCount* c = run_.step_count(); c && c->pos > 0)
    session_->pause_in_buffer(c->tid, c->event + 1, c->pos);
  if (from) {
    last_event_ = from->last_event;
    entry_pending_ = from->entry_pending;
    last_entry_event_ = from->last_entry_event;
    if (from->between) {  // its task stands inside the interval, not just after the event
      resumed_in_[from->tid] = from->event + 1;
      if (Next n = at_start_point(*from); n != Next::Resume) return n;
    } else if (Next n = on_between(); n != Next::Resume)
      return n;
  }
  interval_since_ = std::chrono::steady_clock::now();
  trap_not_before_ = interval_since_;
  trap_give_up_ = std::chrono::steady_clock::time_point::max();
  trap_not_before_ += run_.arm_after;
  RunCommand cmd;
  for (;;) {
    ReplayStep st = session_->run(cmd);
    cmd = RunCommand{};
    Next next = Next::Resume;
    switch (st.kind) {
      case ReplayStep::Resume:
        replaying_ = st.event;
        next = before_resume(*st.task, st.request, cmd);
        break;
      case ReplayStep::Stopped:
        replaying_ = st.event;
        next = after_stop(*st.task, st.stop, cmd);
        break;
      case ReplayStep::PatchRequest:
        cmd.patch_allowed = begin_code_patch(*st.task, st.addr, st.len);
        break;
      case ReplayStep::EventDone:
        next = event_done(*st.event);
        break;
      case ReplayStep::End:
        next = on_end();
        break;
    }
    if (next != Next::Resume) return next;
  }
}

Next ReplayController::event_done(const Event& e) {
  if (pass_trap_.installed()) {
    // Its interval ended without the stop it was for (a checkpoint must not copy it).
    try {
      pass_trap_.remove();
    } catch (const Error&) {
      pass_trap_.abandon();  // its task is gone
    }
  }
  // The steps after a counted pass did not reach the point within its interval: count them
  // from the event instead (slower, never wrong).
  if (const StepCount* c = run_.step_count(); c && c->after_pass && e.number > c->event)
    return pass_fall_back("the steps after the counted pass missed the point");
  last_event_ = e;
  interval_since_ = std::chrono::steady_clock::now();
  if (e.child_tid > 0 || rec_pid_of_.count(e.tid) == 0) note_processes();
  // The window of hits opens: the watchpoints are armed from here, their values read here.
  if (run_.count_from && e.number == run_.count_from) watches_.restart();
  bool was_exec = e.kind == EventKind::Exec;
  note_entries(last_event_);
  if (was_exec) {
    // The task that made it, which has the leader's tid now when another thread made it
    // (execve(2)): its process holds a new image, none of the old breakpoints.
    if (const ReplayTask* t = live(exec_caller(last_event_))) {
      bps_.forget(t->pid);
      watches_.forget(t->tid);  // exec clears the debug registers
    }
  } else if (changes_mappings(last_event_)) {
    for (auto& [rec, t] : session_->tasks())
      if (rec == last_event_.tid && t.state != TaskState::Exited) bps_.revalidate(t.pid, t.tid);
  }
  if (last_event_.kind == EventKind::Syscall && last_event_.child_tid) {
    // A fork's child is a copy of its parent, breakpoint patches included: the table
    // must know them, or it would take a patch for the original byte.
    auto parent = session_->tasks().find(last_event_.tid);
    auto child = session_->tasks().find(last_event_.child_tid);
    if (parent != session_->tasks().end() && child != session_->tasks().end() &&
        child->second.pid != parent->second.pid) {
      if (shares_memory(last_event_, parent->second.tid))
        bps_.share(child->second.pid, parent->second.pid);  // until it execs
      else
        bps_.copy_patches(parent->second.pid, child->second.pid);
    }
  }
  late_watch_at_event();
  maybe_checkpoint();
  return on_between();
}

void ReplayController::note_entries(const Event& e) {
  last_entry_event_ = 0;
  if (e.kind == EventKind::SyscallEntry) {
    entry_pending_[e.tid] = e.number;
  } else if (e.kind == EventKind::Exec) {
    // A successful execve ends at its Exec event: its entry, when it blocked (the kernel
    // waits there for the process's other threads to end, fs/exec.c de_thread), is the
    // instruction before. From another thread, the caller now has the main thread's tid,
    // and the main thread ended without a report: a syscall it waited in is over too.
    auto it = entry_pending_.find(e.tid);
    if (it != entry_pending_.end()) {
      last_entry_event_ = it->second;
      entry_pending_.erase(it);
    }
    if (pid_t now = exec_caller(e); now && now != e.tid) entry_pending_.erase(now);
  } else if (e.kind == EventKind::Syscall || e.kind == EventKind::Exit) {
    auto it = entry_pending_.find(e.tid);
    if (it == entry_pending_.end()) return;
    if (e.kind == EventKind::Syscall) last_entry_event_ = it->second;
    entry_pending_.erase(it);
  }
}

size_t ReplayController::live_tasks() const {
  size_t n = 0;
  for (const auto& [rec, t] : session_->tasks()) n += t.state != TaskState::Exited;
  return n;
}

const ReplayTask* ReplayController::live_by_tid(pid_t tid) const {
  for (const auto& [rec, t] : session_->tasks())
    if (t.tid == tid && t.state != TaskState::Exited) return &t;
  return nullptr;
}

const ReplayTask* ReplayController::live(pid_t rec_tid) const {
  auto it = session_->tasks().find(rec_tid);
  return it == session_->tasks().end() || it->second.state == TaskState::Exited ? nullptr
                                                                                : &it->second;
}

bool ReplayController::changes_mappings(const Event& e) {
  return e.kind == EventKind::Syscall && syscall_has(e.syscallno(), kChangesMappings);
}

bool ReplayController::shares_memory(const Event& e, pid_t tid) {
  try {
    return decode_clone_args(tid, e.regs).shares_memory();
  } catch (const Error&) {  // clone3's arguments gone from memory: a copy, as fork makes
    return false;
  }
}

bool ReplayController::maps_code(const Event& e) {
  if (e.kind == EventKind::Exec) return true;
  if (e.kind != EventKind::Syscall || syscall_failed(e.result)) return false;
  return syscall_has(e.syscallno(), kMapsCode) && (e.regs.rdx & PROT_EXEC);
}

pid_t ReplayController::forked_process(const Event& e) const {
  if (e.kind != EventKind::Syscall || e.child_tid <= 0) return 0;
  const ReplayTask* child = live(e.child_tid);
  return child && child->pid == child->tid ? e.child_tid : 0;
}

pid_t ReplayController::exec_caller(const Event& e) const {
  if (live(e.tid)) return e.tid;
  for (auto& [rec, t] : session_->tasks())
    if (t.state != TaskState::Exited && t.exec_former_rec == e.tid) return rec;
  return 0;
}

pid_t ReplayController::ended_process(const Event& e) const {
  if (e.kind != EventKind::Exit || live_tasks() == 0) return 0;
  auto it = rec_pid_of_.find(e.tid);
  if (it == rec_pid_of_.end()) return 0;
  // A main thread that ended first stays in the session until its status comes (its exit
  // event, after its threads'): the process ends with the last of its tasks to leave.
  for (auto& [rec, t] : session_->tasks()) {
    auto p = rec_pid_of_.find(rec);
    if (p != rec_pid_of_.end() && p->second == it->second) return 0;
  }
  return it->second;
}

void ReplayController::note_processes() {
  for (auto& [rec, t] : session_->tasks())
    for (auto& [rec2, t2] : session_->tasks())
      if (t2.tid == t.pid) rec_pid_of_[rec] = rec2;
}

bool ReplayController::consumes_instruction(const Event& e) {
  return e.kind == EventKind::Syscall || e.kind == EventKind::Exec || is_emulated_insn(e.kind) ||
         e.kind == EventKind::Signal;
}

bool ReplayController::made_by(const Event& e, pid_t rec_tid) const {
  if (e.tid == rec_tid) return true;
  const ReplayTask* t = e.kind == EventKind::Exec ? live(rec_tid) : nullptr;
  return t && t->exec_former_rec == e.tid;
}

CodeSite ReplayController::site_in(pid_t pid, uint64_t addr) {
  try {
    return rwd::code_site(read_proc_maps(pid), addr);
  } catch (const Error&) {
    return CodeSite{"", addr};
  }
}

namespace {
/// The executable mappings of libc in process `pid` (a file named libc.so.*, as the library's
/// patching finds it: preload/patch.c find_libc), as [start, end) ranges.
std::vector<std::pair<uint64_t, uint64_t>> libc_text(pid_t pid) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  try {
    for (const ProcMapping& m : read_proc_maps(pid)) {
      std::string base = m.path.substr(m.path.rfind('/') + 1);
      if (m.exec && base.rfind("libc.so.", 0) == 0) out.emplace_back(m.start, m.end);
    }
  } catch (const Error&) {
    // The process is gone: nothing to keep out.
  }
  return out;
}
}  // namespace

void ReplayController::sync_breakpoints(const ReplayTask& t) {
  auto w = pass_want();
  bps_.keep_out(w ? w->x : 0, w ? w->x + w->reach : 0);
  bool patching = session_->patching_code(t.pid);
  if (patching && !bps_.keeps_out_of(t.pid)) {
    bps_.keep_out_of(t.pid, libc_text(t.pid));
  } else if (!patching && bps_.keeps_out_of(t.pid)) {
    bps_.keep_out_of(t.pid, {});
    bps_.revalidate(t.pid, t.tid);
  }
  bps_.sync(t.pid, t.tid);
}

Next ReplayController::pause(StopInfo si, const Point& here) {
  if (pass_bp_) bps_.remove_internal(*std::exchange(pass_bp_, std::nullopt));
  si.event = session_->events_done();
  if (si.tid == 0) si.tid = here.tid ? here.tid : last_event_.tid;
  // Where the debugger stands: at a point between events, the task the stop reports (a
  // step back onto a handler's first instruction, just after the signal's event).
  last_pause_event_ = si.event;
  last_pause_tid_ = here.tid ? here.tid : si.tid;
  last_pause_rip_ = 0;
  if (last_pause_tid_)
    if (const ReplayTask* t = live(last_pause_tid_)) last_pause_rip_ = get_regs(t->tid).rip;
  if (debug_)
    fprintf(stderr, "rewind: timeline: pause (run %d, point kind %d) at event %llu\n",
            int(run_.kind.index()), int(here.kind), (unsigned long long)si.event);
  here_ = here;
  here_cost_ = checkpoints_.cost_here();
  here_replay_ = replays_;
  // A checkpoint inside this point's interval taken by this replay before it got here, or
  // the one it started from, lies before it.
  here_inner_ = 0;
  if (here.kind == Point::Trap) {
    here_inner_ = inner_.newest_of(replays_, here.event, here.tid);
    const Saved* from = inner_.find(start_inner_);
    if (!here_inner_ && from && from->event == here.event && from->tid == here.tid)
      here_inner_ = start_inner_;
  }
  for (auto& w : watches_.all()) {
    if (const ReplayTask* t = live(here.tid ? here.tid : last_event_.tid))
      w.last = rwd::read_memory(t->tid, w.addr, size_t(w.len));
  }
  // The stopped task's registers, as inspection reports them, for the caller to read
  // without a hand-off (Timeline::registers).
  if (si.tid && live(si.tid)) {
    try {
      thread_.keep_registers(si.tid, registers(si.tid));
    } catch (const Error&) {
      // Gone since the stop: the caller asks the replay thread, and hears so.
    }
  }
  checkpoints_.pause_clock();  // waiting for the user is not replay time
  auto paused = std::chrono::steady_clock::now();
  Next next = thread_.serve(si, [this] { return std::exchange(immediate_stop_, std::nullopt); });
  checkpoints_.resume_clock();
  // Nor for the interval's next checkpoint: a run that stops often (a breakpoint the
  // debugger resumes from at once) would otherwise take one at every few stops.
  interval_since_ += std::chrono::steady_clock::now() - paused;
  return next;
}

const ReplayTask& ReplayController::task(pid_t rec_tid) const {
  const ReplayTask* t = live(rec_tid);
  if (!t) throw Error("no live task " + std::to_string(rec_tid) + " at this point");
  return *t;
}

}  // namespace rwd
