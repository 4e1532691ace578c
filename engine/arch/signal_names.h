// Signal names for messages and dumps (signal(7)).
#pragma once

#include <string>

namespace rwd {

/// "SIGSEGV" for 11; "signal 77" for a number without a name.
std::string signal_name(int sig);
/// What the signal means, "Segmentation fault" for 11 (sigdescr_np, as strsignal(3)).
std::string signal_description(int sig);
/// The signal named `name` ("SIGUSR1", "USR1", "usr1" or a number "10"); 0 when none.
int signal_number(const std::string& name);

}  // namespace rwd
