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

bool default_action_ends(int sig) {
  switch (sig) {
    case SIGCHLD:
    case SIGCONT:
    case SIGURG:
    case SIGWINCH:
    case SIGSTOP:
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
      return false;
    default:
      return true;
  }
}

}  // namespace rwd
