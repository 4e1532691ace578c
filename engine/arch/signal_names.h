// Signal names for messages and dumps (signal(7)).
#pragma once

#include <string>

namespace rwd {

/// "SIGSEGV" for 11; "signal 77" for a number without a name.
std::string signal_name(int sig);

}  // namespace rwd
