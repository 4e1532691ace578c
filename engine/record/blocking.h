// Which syscalls may wait for another task (a lock holder, a pipe writer, a timer), so the
// recorder lets another task of the process run while they wait (rr's "desched").
#pragma once

#include "engine/arch/registers.h"

namespace rwd {

/// True for syscalls that may sleep until something else happens: futex waits, reads and
/// writes on pipes and sockets, poll/select/epoll, accept/connect, sleeps, waits for children
/// or signals, file locks, sched_yield. Others are expected to return promptly; one that
/// blocks anyway is noticed by the recorder's tick (its state in /proc is 'S' or 'D').
bool syscall_may_block(const Registers& entry);

}  // namespace rwd
