// Printing a replayed program's output again: `rewind replay -a` writes what the program
// wrote to its terminal (or redirected stdout/stderr) when recorded.
#pragma once

#include <sys/types.h>

#include <string>

#include "engine/arch/registers.h"
#include "engine/arch/syscall_table.h"
#include "engine/trace/event.h"

namespace rwd {

/// The bytes a write-like syscall sends (at entry `regs`, `result` bytes), read from the
/// replayed task's memory: one buffer, or the iovec array's buffers in order (at most
/// IOV_MAX of them, per writev(2)).
std::string output_bytes(pid_t tid, OutputKind kind, const Registers& regs, int64_t result);

/// Reads the bytes a write-like syscall sends (at entry `regs`, `result` bytes) from the
/// replayed task's memory and writes them to rewind's own stdout or stderr.
void echo_output(pid_t tid, OutputKind kind, const Registers& regs, int64_t result,
                 OutputStream to);

}  // namespace rwd
