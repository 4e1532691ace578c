#include "signal_names.h"

#include <cstring>

namespace rwd {

std::string signal_name(int sig) {
  const char* n = sigabbrev_np(sig);
  return n ? std::string("SIG") + n : "signal " + std::to_string(sig);
}

}  // namespace rwd
