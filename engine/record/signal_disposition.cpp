#include "signal_disposition.h"

#include <signal.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace rwd {

bool signal_is_ignored(pid_t tid, int sig) {
  std::ifstream f("/proc/" + std::to_string(tid) + "/status");
  std::string line;
  uint64_t ign = 0, cgt = 0;
  while (std::getline(f, line)) {
    if (line.rfind("SigIgn:", 0) == 0) ign = std::stoull(line.substr(7), nullptr, 16);
    if (line.rfind("SigCgt:", 0) == 0) cgt = std::stoull(line.substr(7), nullptr, 16);
  }
  uint64_t bit = 1ull << (sig - 1);
  if (cgt & bit) return false;
  if (ign & bit) return true;
  return sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH;
}

}  // namespace rwd
