#include "process_list.h"

#include <map>

#include "engine/trace/trace_reader.h"

namespace rwd {

std::vector<ProcessInfo> trace_processes(const std::string& dir) {
  if (auto s = read_trace_summary(dir)) return s->processes;
  TraceReader r(dir);
  std::map<int32_t, size_t> index;
  std::vector<ProcessInfo> out;
  auto get = [&](int32_t pid) -> ProcessInfo& {
    auto [it, fresh] = index.emplace(pid, out.size());
    if (fresh) out.push_back(ProcessInfo{pid, 0, false, 0, {}});
    return out[it->second];
  };
  while (auto e = r.next()) {
    if (e->kind == EventKind::Exec) {
      ProcessInfo& p = get(e->tid);
      p.argv = e->argv;
    } else if (e->kind == EventKind::Syscall && e->child_tid) {
      std::vector<std::string> argv = get(e->tid).argv;
      ProcessInfo& c = get(e->child_tid);
      c.ppid = e->tid;
      c.argv = argv;
    } else if (e->kind == EventKind::Exit) {
      ProcessInfo& p = get(e->tid);
      p.ended = true;
      p.status = e->status;
    }
  }
  return out;
}

}  // namespace rwd
