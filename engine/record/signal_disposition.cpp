#include "signal_disposition.h"

#include <signal.h>

#include "engine/os/proc.h"

namespace rwd {

namespace {
/// Whether the default action of `sig` is to ignore it (signal(7): Ign).
bool default_action_ignores(int sig) {
  return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH;
}
}  // namespace

bool signal_is_ignored(pid_t tid, int sig) {
  ProcSignals m = read_proc_signals(tid);
  uint64_t bit = signal_bit(sig);
  if (m.caught & bit) return false;
  if (m.ignored & bit) return true;
  return default_action_ignores(sig);
}

bool signal_is_caught(pid_t tid, int sig) {
  return read_proc_signals(tid).caught & signal_bit(sig);
}

bool default_action_ends(int sig) {
  const bool stops = sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
  return !stops && !default_action_ignores(sig);
}

}  // namespace rwd
