// One line of text per trace event, as `rewind dump` prints it and the DAP timeline shows it.
#pragma once

#include <cstdint>
#include <string>

#include "engine/trace/event.h"

namespace rwd {

/// errno's name ("ENOENT" for 2), or the kernel-internal restart codes a syscall stop can
/// show (include/linux/errno.h: ERESTARTSYS 512 ... ERESTART_RESTARTBLOCK 516); "?" if
/// unknown.
std::string error_name(int64_t err);

/// What an event did, in a few words: "write = 6 [stdout]", "SIGSEGV (fault) at 0x401136",
/// "status 0", "preempted at 0x401020".
std::string describe_event(const Event& e);

}  // namespace rwd
