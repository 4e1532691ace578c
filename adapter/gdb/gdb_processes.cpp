#include "adapter/gdb/gdb_processes.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "adapter/gdb/gdb_packet.h"
#include "adapter/gdb/gdb_server.h"
#include "adapter/gdb/gdb_signals.h"

namespace rwd::gdb {

std::string GdbProcesses::negotiate(std::string_view features) {
  auto offered = [&](std::string_view f) { return features.find(f) != std::string_view::npos; };
  multiprocess_ = offered("multiprocess+");
  // Fork and exec events name processes: they come only with the multiprocess extensions.
  fork_events_ = multiprocess_ && offered("fork-events+");
  exec_events_ = multiprocess_ && offered("exec-events+");
  tl_.set_stop_at_process_events(fork_events_ || exec_events_);
  auto all = tl_.tasks();
  for (const TaskInfo& t : all) pid_of_[t.tid] = t.pid;
  first_process_ = all.empty() ? 0 : all.front().pid;
  announced_ = {first_process_};
  detached_.clear();
  std::string out;
  if (multiprocess_) out += ";multiprocess+";
  if (fork_events_) out += ";fork-events+";
  if (exec_events_) out += ";exec-events+";
  return out;
}

std::vector<TaskInfo> GdbProcesses::tasks() {
  std::vector<TaskInfo> out;
  for (const TaskInfo& t : tl_.tasks()) {
    pid_of_[t.tid] = t.pid;
    if (detached_.count(t.pid)) continue;
    if (fork_events_ && !announced_.count(t.pid)) continue;
    out.push_back(t);
  }
  return out;
}

pid_t GdbProcesses::first_task_of(pid_t pid) {
  for (const TaskInfo& t : tasks())
    if (t.pid == pid) return t.tid;
  return 0;
}

pid_t GdbProcesses::pid_of(pid_t tid) {
  if (!pid_of_.count(tid)) tasks();
  auto it = pid_of_.find(tid);
  return it == pid_of_.end() ? tid : it->second;
}

std::string GdbProcesses::thread_id(pid_t tid) {
  return format_thread_id(multiprocess_ ? pid_of(tid) : 0, tid, multiprocess_);
}

std::optional<std::string> GdbProcesses::proc_file(pid_t pid, pid_t tid, std::string_view name) {
  pid_t task = tid ? tid : pid;
  bool known = false;
  for (const TaskInfo& t : tasks()) known |= t.tid == task && t.pid == pid;
  if (!known) return std::nullopt;
  if (name == "exe") return tl_.program_file(task);
  if (name != "maps") return std::nullopt;
  std::string text;
  for (const ProcMapping& m : tl_.mappings(task)) {
    char line[128];
    snprintf(line, sizeof line, "%08llx-%08llx %c%c%c%c %08llx 00:00 %llu",
             (unsigned long long)m.start, (unsigned long long)m.end, m.read ? 'r' : '-',
             m.write ? 'w' : '-', m.exec ? 'x' : '-', m.shared ? 's' : 'p',
             (unsigned long long)m.offset, (unsigned long long)m.inode);
    text += line;
    // Padded before the path as the kernel pads it (fs/proc/task_mmu.c).
    if (!m.path.empty()) text += std::string(std::max<size_t>(1, 73 - strlen(line)), ' ') + m.path;
    text += "\n";
  }
  return text;
}

std::string GdbProcesses::exit_reply(pid_t pid, std::optional<int> status) {
  announced_.erase(pid);
  seen_live_.erase(pid);
  char buf[48];
  int st = status.value_or(0);
  // W: exited with that code; X: killed by that signal (gdb's numbering).
  if (WIFSIGNALED(st))
    snprintf(buf, sizeof buf, "X%02x;process:%x", to_gdb_signal(WTERMSIG(st)) & 0xff,
             unsigned(pid));
  else
    snprintf(buf, sizeof buf, "W%02x;process:%x", WEXITSTATUS(st), unsigned(pid));
  return buf;
}

std::optional<std::string> GdbProcesses::reply(const StopInfo& s, WatchKind watch_kind,
                                               std::optional<StopInfo>& held) {
  last_exec_ = 0;
  if (pid_t p = std::exchange(exec_pending_, 0)) {
    if (pid_t task = first_task_of(p)) {
      held = s;
      last_exec_ = p;
      return "T05exec:" + to_hex(tl_.program_file(task)) + ";thread:" + thread_id(task) + ";";
    }
  }
  if (s.reason == StopReason::ProcessExited) {
    pid_of_[s.tid] = s.pid;
    if (!fork_events_ || !announced_.count(s.pid)) return std::nullopt;
    return exit_reply(s.pid, s.status);
  }
  if (fork_events_) {
    // Processes gdb knows that have ended since a stop where they lived (a step or a seek
    // went past the end): it hears of that first. One that is not live because a run went
    // back before its fork stays as it is (the protocol can only say that it exited).
    std::set<pid_t> live;
    for (const TaskInfo& t : tl_.tasks()) live.insert(t.pid);
    for (pid_t p : announced_) {
      auto seen = seen_live_.find(p);
      if (live.count(p)) {
        seen_live_[p] = s.event;
      } else if (seen != seen_live_.end() && s.event > seen->second) {
        held = s;
        return exit_reply(p, tl_.process_exit_status(p));
      }
    }
  }
  pid_t pid = pid_of(s.tid);
  const std::string id = thread_id(s.tid), thread = "thread:" + id + ";";
  if (s.reason == StopReason::Forked) {
    pid_of_[s.child] = s.child;
    if (!fork_events_ || announced_.count(s.child) || detached_.count(s.child) ||
        detached_.count(pid))
      return std::nullopt;
    announced_.insert(s.child);
    seen_live_[s.child] = s.event;
    return "T05fork:" + format_thread_id(s.child, s.child, true) + ";" + thread;
  }
  if (s.reason == StopReason::Execed) {
    if (!exec_events_ || detached_.count(pid)) return std::nullopt;
    // The new program's file (gdb manual, "Stop Reply Packets": exec, the hex-encoded
    // absolute path): gdb loads its symbols into this inferior, as after a native exec.
    last_exec_ = pid;
    return "T05exec:" + to_hex(tl_.program_file(s.tid)) + ";" + thread;
  }
  if (detached_.count(pid)) return std::nullopt;
  if (fork_events_ && !announced_.count(pid) && s.reason != StopReason::TraceEnd) {
    pid_t parent = first_task_of(first_process_);
    if (!parent) {
      for (pid_t p : announced_)
        if ((parent = first_task_of(p))) break;
    }
    if (parent) {
      announced_.insert(pid);
      seen_live_[pid] = s.event;
      held = s;
      // gdb takes a forked process for a copy of its parent's program.
      if (exec_events_ && tl_.program_file(s.tid) != tl_.program_file(parent)) exec_pending_ = pid;
      return "T05fork:" + format_thread_id(pid, pid, true) + ";thread:" + thread_id(parent) + ";";
    }
  }
  return stop_reply(s, false, watch_kind, id);
}

}  // namespace rwd::gdb
