// Whether delivering a signal to a task would have any effect (signal(7) dispositions).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace rwd {

/// True when `sig` is ignored by the task: SIG_IGN, or SIG_DFL whose default action is to
/// ignore (SIGCHLD, SIGCONT, SIGURG, SIGWINCH), per /proc/TID/status SigIgn and SigCgt.
bool signal_is_ignored(pid_t tid, int sig);

/// True when the task has a handler for `sig` (/proc/TID/status SigCgt).
bool signal_is_caught(pid_t tid, int sig);

/// True when the default action of `sig` ends the process (signal(7): Term or Core), false
/// for those that ignore (SIGCHLD, SIGCONT, SIGURG, SIGWINCH) or stop it (SIGSTOP, SIGTSTP,
/// SIGTTIN, SIGTTOU).
bool default_action_ends(int sig);

}  // namespace rwd
