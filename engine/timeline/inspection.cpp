// Reading the replayed program while the timeline is paused: registers (as the program sees
// them at a syscall entry), memory with breakpoint patches hidden, tasks, the auxiliary
// vector (replay_controller.h).
#include <filesystem>
#include <map>

#include "engine/errors.h"
#include "engine/os/insn_patch.h"
#include "engine/os/proc.h"
#include "engine/os/ptrace_ops.h"
#include "engine/os/tracee_memory.h"
#include "engine/timeline/replay_controller.h"

namespace rwd {

pid_t ReplayController::inspect_tid(pid_t rec_tid) {
  const ReplayTask& t = task(rec_tid);
  return diversion_ && rec_tid == diversion_rec_ ? diversion_tid_ : t.tid;
}

bool ReplayController::at_syscall_entry(pid_t rec_tid) {
  if (here_.kind == Point::Entry && here_.tid == rec_tid) return true;
  const ReplayTask* t = live(rec_tid);
  return t && t->at_entry;
}

Registers ReplayController::registers(pid_t rec_tid) {
  Registers r = get_regs(inspect_tid(rec_tid));
  // Paused at a point: its orig_rax (a signal's stop keeps the recorded one, on_signal).
  if (here_.kind == Point::Trap && here_.tid == rec_tid && r.rip == here_.regs.rip &&
      !(diversion_ && rec_tid == diversion_rec_))
    r.orig_rax = here_.regs.orig_rax;
  if (at_syscall_entry(rec_tid)) {
    // At a syscall's entry the kernel already moved rip past the instruction and set rax
    // to -ENOSYS; show the state before the instruction, as the program had it.
    r.rip -= 2;
    r.rax = r.orig_rax;
    r.orig_rax = uint64_t(-1);  // not in a syscall yet
  }
  return r;
}

std::vector<uint8_t> ReplayController::memory(pid_t rec_tid, uint64_t addr, size_t len) {
  const ReplayTask& t = task(rec_tid);
  auto bytes = rwd::read_memory(inspect_tid(rec_tid), addr, len);
  bps_.hide(t.pid, addr, bytes);
  unpatch_emulated_view(inspect_tid(rec_tid), addr, bytes);
  return bytes;
}

namespace {

/// The name of the program that replayed process `pid` runs: the replay executes the trace's
/// saved copies, named NAME-N (file_saver.cpp), so NAME is the recorded program's file name.
/// Empty when /proc cannot tell.
std::string program_name(pid_t pid) {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
  if (ec) return "";
  std::string name = exe.filename().string();
  size_t dash = name.find_last_of('-');
  if (dash != std::string::npos && dash + 1 < name.size() &&
      name.find_first_not_of("0123456789", dash + 1) == std::string::npos)
    name.resize(dash);
  return name;
}

}  // namespace

std::vector<TaskInfo> ReplayController::task_list() const {
  std::vector<TaskInfo> out;
  std::map<pid_t, std::string> programs;  // real pid -> program: read once per process
  for (auto& [rec, t] : session_->tasks()) {
    if (t.state == TaskState::Exited) continue;
    TaskInfo i;
    i.tid = rec;
    for (auto& [rec2, t2] : session_->tasks())
      if (t2.tid == t.pid) i.pid = rec2;
    auto [it, fresh] = programs.try_emplace(t.pid);
    if (fresh) it->second = program_name(t.pid);
    i.program = it->second;
    out.push_back(i);
  }
  return out;
}

std::vector<uint8_t> ReplayController::auxv(pid_t rec_tid) {
  return read_proc_auxv(task(rec_tid).pid);
}

std::string ReplayController::program_file(pid_t rec_tid) {
  std::error_code ec;
  auto exe =
      std::filesystem::read_symlink("/proc/" + std::to_string(task(rec_tid).pid) + "/exe", ec);
  return ec ? "" : exe.string();
}

}  // namespace rwd
