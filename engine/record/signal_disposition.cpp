#include "signal_disposition.h"

#include <signal.h>

#include "engine/os/proc.h"

namespace rwd {

bool signal_is_ignored(pid_t tid, int sig) {
  ProcSignals m = read_proc_signals(tid);
  uint64_t bit = signal_bit(sig);
  if (m.caught & bit) return false;
  if (m.ignored & bit) return true;
  return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH;
}

}  // namespace rwd
