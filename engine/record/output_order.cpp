// The order of the recorded processes' output. Replay prints each write to rewind's stdout and
// stderr at its event (`rewind replay -a`), so the trace must hold those events in the order
// the kernel wrote the bytes. Two processes run at once, and the recorder takes their exit
// stops in whatever order waitpid gives them: gdb's "[Thread ... exited]" and its inferior's
// line, written at the same moment, came out in one order and replayed in the other. So one
// output write runs at a time: a second one waits at its entry stop until the first one's event
// is written.
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <string>

#include "engine/os/proc.h"
#include "engine/record/record_session.h"

namespace rwd {

bool RecordSession::hold_output_write(RecordTask& t) {
  const SyscallSpec* spec = syscall_spec(long(t.entry.orig_rax));
  if (t.skip_syscall || !spec || spec->output == OutputKind::None || t.entry.rdi > INT_MAX)
    return false;
  struct stat st;
  const std::string fd = "/proc/" + std::to_string(t.tid) + "/fd/" + std::to_string(t.entry.rdi);
  if (::stat(fd.c_str(), &st) != 0 || output_target(st, int(t.entry.rdi)) == OutputStream::None)
    return false;
  if (output_writer_ && output_writer_ != t.tid && tasks_.count(output_writer_)) {
    const char state = proc_task_state(output_writer_);
    if (state == 'S' || state == 'D') return false;  // asleep in its write: no order to keep
    output_held_.push_back(t.tid);
    return true;
  }
  output_writer_ = t.tid;
  return false;
}

void RecordSession::release_output(pid_t tid) {
  std::erase(output_held_, tid);
  if (tid != output_writer_) return;
  output_writer_ = 0;
  while (!output_held_.empty()) {
    const pid_t next = output_held_.front();
    output_held_.pop_front();
    auto it = tasks_.find(next);
    if (it == tasks_.end()) continue;
    output_writer_ = next;
    return resume_syscall(it->second);
  }
}

}  // namespace rwd
