// Whether delivering a signal to a task would have any effect (signal(7) dispositions).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace rwd {

/// True when `sig` is ignored by the task: SIG_IGN, or SIG_DFL whose default action is to
/// ignore (SIGCHLD, SIGCONT, SIGURG, SIGWINCH), per /proc/TID/status SigIgn and SigCgt.
bool signal_is_ignored(pid_t tid, int sig);

}  // namespace rwd
