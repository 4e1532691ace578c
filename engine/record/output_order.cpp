// The order of the recorded processes' output. Replay prints each write to rewind's stdout and
// stderr at its event (`rewind replay -a`), so the trace must hold those events in the order
// the kernel wrote the bytes. Two processes run at once, and the recorder takes their exit
// stops in whatever order waitpid gives them: gdb's "[Thread ... exited]" and its inferior's
// line, written at the same moment, came out in one order and replayed in the other. So one
// write to each such file runs at a time: a second one waits at its entry stop until the first
// one's event is written.
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <string>

#include "engine/os/proc.h"
#include "engine/record/record_session.h"

namespace rwd {

bool RecordSession::hold_output_write(RecordTask& t) {
  t.write_target.reset();
  const SyscallSpec* spec = syscall_spec(long(t.entry.orig_rax));
  if (t.skip_syscall || !spec || spec->output == OutputKind::None || t.entry.rdi > INT_MAX)
    return false;
  struct stat st;
  const std::string fd = fd_path(t.tid, int(t.entry.rdi));
  if (::stat(fd.c_str(), &st) != 0) return false;
  t.write_target = st;  // its exit's event names the output from it (on_syscall_exit)
  if (on_procfs(t.tid, int(t.entry.rdi), st) && hold_for_proc_mem_write(t, st)) return true;
  if (output_target(st, int(t.entry.rdi)) == OutputStream::None) return false;
  auto file = std::find_if(output_files_.begin(), output_files_.end(), [&](const OutputFile& f) {
    return f.dev == st.st_dev && f.ino == st.st_ino;
  });
  if (file == output_files_.end())
    file = output_files_.insert(output_files_.end(), OutputFile{st.st_dev, st.st_ino, 0, {}});
  if (file->writer && file->writer != t.tid && tasks_.count(file->writer)) {
    const char state = proc_task_state(file->writer);
    if (state == 'S' || state == 'D') return false;  // asleep in its write: no order to keep
    file->held.push_back(t.tid);
    return true;
  }
  file->writer = t.tid;
  return false;
}

void RecordSession::release_output(pid_t tid) {
  for (OutputFile& f : output_files_) {
    std::erase(f.held, tid);
    if (f.writer != tid) continue;
    f.writer = 0;
    while (!f.held.empty()) {
      const pid_t next = f.held.front();
      f.held.pop_front();
      auto it = tasks_.find(next);
      if (it == tasks_.end()) continue;
      f.writer = next;
      resume_syscall(it->second);
      break;
    }
  }
}

}  // namespace rwd
