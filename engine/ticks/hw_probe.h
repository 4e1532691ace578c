// Whether this machine has a usable hardware counter of retired branches (the ticks of
// rr's design), probed with perf_event_open(2).
#pragma once

#include <string>

namespace rwd {

/// True when a hardware branch counter opens and counts for this process. Otherwise `why`
/// says what failed ("perf_event_open: No such file or directory", the usual answer in a VM
/// without a virtual PMU).
bool hardware_ticks_available(std::string* why);

}  // namespace rwd
