#include "signal_names.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace rwd {

std::string signal_name(int sig) {
  const char* n = sigabbrev_np(sig);
  return n ? std::string("SIG") + n : "signal " + std::to_string(sig);
}

std::string signal_description(int sig) {
  const char* d = sigdescr_np(sig);
  return d ? d : "Unknown signal " + std::to_string(sig);
}

int signal_number(const std::string& name) {
  if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
    int n = std::atoi(name.c_str());
    return n > 0 && n < 65 ? n : 0;
  }
  std::string up;
  for (char c : name) up += char(std::toupper(static_cast<unsigned char>(c)));
  if (up.rfind("SIG", 0) == 0) up = up.substr(3);
  for (int s = 1; s < 65; ++s) {
    const char* n = sigabbrev_np(s);
    if (n && up == n) return s;
  }
  return 0;
}

}  // namespace rwd
