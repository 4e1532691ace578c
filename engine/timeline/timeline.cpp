// The timeline's facade (timeline.h): each method hands its work to the replay controller's
// thread and waits for it (replay_controller.h), but for what needs no ptrace request (memory
// reads, /proc files, the wanted breakpoints and watchpoints, which the replay thread applies
// before it resumes a task, the stopped task's registers it kept): that runs on the caller's
// thread while the replay stays paused.
#include "engine/timeline/timeline.h"

#include <sys/ptrace.h>

#include <cstring>

#include "engine/arch/registers.h"
#include "engine/errors.h"
#include "engine/os/ptrace_ops.h"
#include "engine/timeline/replay_controller.h"
#include "engine/trace/trace_reader.h"

namespace rwd {

Timeline::Timeline(const std::string& trace_dir)
    : engine_(std::make_unique<ReplayController>(trace_dir)) {}

Timeline::~Timeline() = default;

StopInfo Timeline::current() const {
  return engine_->current();
}

StopInfo Timeline::resume_forward() {
  return engine_->operate([this] { return engine_->op_forward(); });
}

StopInfo Timeline::step_forward(pid_t tid) {
  return engine_->operate([this, tid] { return engine_->op_step(tid); });
}

void Timeline::set_output_listener(std::function<void(OutputStream, const std::string&)> listener) {
  std::lock_guard lock(engine_->listener_mu_);
  engine_->output_listener_ = std::move(listener);
}

void Timeline::interrupt() {
  engine_->interrupt_ = true;
}

StopInfo Timeline::resume_backward(WatchStop at) {
  return engine_->operate([this, at] { return engine_->op_reverse_continue(at); });
}

StopInfo Timeline::step_backward(pid_t tid, uint64_t skip_lo, uint64_t skip_hi) {
  return engine_->operate(
      [this, tid, skip_lo, skip_hi] { return engine_->op_reverse_step(tid, skip_lo, skip_hi); });
}

StopInfo Timeline::seek(uint64_t event) {
  return engine_->operate([this, event] { return engine_->op_seek(event); });
}

void Timeline::set_stop_at_process_events(bool on) {
  engine_->while_paused([&] {
    engine_->stop_at_process_events_ = on;
    engine_->forget_hit_origin();
  });
}

void Timeline::set_stop_after_event(uint64_t event) {
  engine_->while_paused([&] {
    engine_->stop_after_event_ = event;
    engine_->forget_hit_origin();
  });
}

void Timeline::set_stop_at_code_mappings(bool on) {
  engine_->while_paused([&] {
    engine_->stop_at_code_mappings_ = on;
    engine_->forget_hit_origin();
  });
}

CodeSite Timeline::code_site(pid_t tid, uint64_t addr) {
  return rwd::code_site(mappings(tid), addr);
}

void Timeline::add_breakpoint(const CodeSite& site) {
  engine_->while_paused([&] {
    engine_->bps_.add(site);
    engine_->forget_hit_origin();
  });
}

void Timeline::remove_breakpoint(const CodeSite& site) {
  engine_->while_paused([&] {
    engine_->bps_.remove(site);
    engine_->forget_hit_origin();
  });
}

bool Timeline::add_watchpoint(uint64_t addr, int len, WatchKind kind) {
  // The size first: it is refused on every machine.
  if (kind == WatchKind::ReadWrite && wide_watch(addr, len))
    throw Error("a watchpoint on reads covers 1, 2, 4 or 8 bytes aligned to their size (one " +
                std::string("debug register); ") + std::to_string(len) +
                " bytes can be watched for writes only");
  if (kind == WatchKind::ReadWrite && !hardware_debug_registers())
    throw Error(
        "this machine's CPU does not give programs its debug registers (a paravirtualised "
        "guest): rewind watches writes in software here, but cannot see reads");
  if (len <= 0 || len > kMaxWatchBytes)
    throw Error("cannot watch " + std::to_string(len) + " bytes: a watchpoint covers at most " +
                std::to_string(kMaxWatchBytes));
  bool ok = false;
  engine_->while_paused([&] {
    ok = engine_->watches_.add(addr, len, kind);
    engine_->forget_hit_origin();
  });
  return ok;
}

void Timeline::remove_watchpoint(uint64_t addr, int len, WatchKind kind) {
  engine_->while_paused([&] {
    engine_->watches_.remove(addr, len, kind);
    engine_->forget_hit_origin();
  });
}

TimelinePosition Timeline::position() {
  TimelinePosition p;
  engine_->call([&] { p = engine_->position_here(); });
  return p;
}

bool Timeline::at_position(const TimelinePosition& p) {
  bool at = false;
  engine_->call([&] { at = engine_->at_position(p); });
  return at;
}

Registers Timeline::registers(pid_t tid) {
  const std::optional<Registers> kept = engine_->kept_registers(tid);
  if (kept && !register_cache_checked()) return *kept;
  Registers r;
  engine_->call([&] { r = engine_->registers(tid); });
  if (kept && std::memcmp(&*kept, &r, sizeof r) != 0)
    throw Error("task " + std::to_string(tid) +
                "'s registers kept at the stop differ from the kernel's (rip " + hex(kept->rip) +
                ", the kernel's " + hex(r.rip) + ")");
  return r;
}

std::optional<user_fpregs_struct> Timeline::fp_registers(pid_t tid) {
  std::optional<user_fpregs_struct> out;
  engine_->call([&] {
    user_fpregs_struct f{};
    if (ptrace(PTRACE_GETFPREGS, engine_->inspect_tid(tid), nullptr, &f) == 0) out = f;
  });
  return out;
}

std::vector<uint8_t> Timeline::read_memory(pid_t tid, uint64_t addr, size_t len) {
  std::vector<uint8_t> out;
  engine_->while_paused([&] { out = engine_->memory(tid, addr, len); });
  return out;
}

void Timeline::write_memory(pid_t tid, uint64_t addr, const std::vector<uint8_t>& bytes) {
  engine_->call([&] { engine_->write(tid, addr, bytes); });
}

void Timeline::set_registers(pid_t tid, const Registers& regs) {
  engine_->call([&] { engine_->set_regs_diverted(tid, regs); });
}

std::vector<TaskInfo> Timeline::tasks() {
  std::vector<TaskInfo> out;
  engine_->while_paused([&] { out = engine_->task_list(); });
  return out;
}

uint64_t Timeline::event_count() const {
  if (!event_count_) {
    TraceReader reader(engine_->opts_.trace_dir);
    while (reader.next()) {
    }
    event_count_ = reader.last_event();
  }
  return event_count_;
}

std::string Timeline::executable() const {
  std::string path;
  engine_->call([&] {
    const auto& tr = engine_->session_->trace();
    path = tr.file_path(tr.meta().exe_file);
  });
  return path;
}

std::optional<int> Timeline::process_exit_status(pid_t pid) const {
  std::optional<int> out;
  engine_->call([&] {
    const auto& summary = engine_->session_->trace().summary();
    if (!summary) return;
    for (const ProcessInfo& p : summary->processes)
      if (p.pid == pid && p.ended) out = p.status;
  });
  return out;
}

bool Timeline::add_checkpoint() {
  bool ok = false;
  engine_->call([&] { ok = engine_->request_checkpoint(); });
  return ok;
}

CheckpointStats Timeline::checkpoints() {
  CheckpointStats st;
  engine_->call([&] { st = engine_->checkpoint_stats(); });
  return st;
}

std::vector<ProcMapping> Timeline::mappings(pid_t tid) {
  std::vector<ProcMapping> out;
  engine_->while_paused([&] { out = read_proc_maps(engine_->inspect_tid(tid)); });
  return out;
}

std::vector<uint8_t> Timeline::auxv(pid_t tid) {
  std::vector<uint8_t> out;
  engine_->while_paused([&] { out = engine_->auxv(tid); });
  return out;
}

std::string Timeline::program_file(pid_t tid) {
  std::string out;
  engine_->while_paused([&] { out = engine_->program_file(tid); });
  return out;
}

}  // namespace rwd
