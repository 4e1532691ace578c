#include "signal_disposition.h"

#include <signal.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace rwd {

SignalMasks signal_masks(pid_t tid) {
  std::ifstream f("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  SignalMasks m;
  while (std::getline(f, line)) {
    if (line.rfind("SigIgn:", 0) == 0) m.ignored = std::stoull(line.substr(7), nullptr, 16);
    if (line.rfind("SigCgt:", 0) == 0) m.caught = std::stoull(line.substr(7), nullptr, 16);
    if (line.rfind("SigBlk:", 0) == 0) m.blocked = std::stoull(line.substr(7), nullptr, 16);
  }
  return m;
}

bool signal_is_ignored(pid_t tid, int sig) {
  SignalMasks m = signal_masks(tid);
  uint64_t bit = 1ull << (sig - 1);
  if (m.caught & bit) return false;
  if (m.ignored & bit) return true;
  return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH;
}

}  // namespace rwd
