// What the recorder saves right after a successful execve: the new address space, so that
// replay can rebuild it exactly even when the files, the kernel's choice of stack layout or
// the host's dynamic loader differ (DESIGN.md "Recording").
#pragma once

#include <sys/types.h>

#include "engine/record/file_saver.h"
#include "engine/trace/event.h"

namespace rwd {

/// Builds the Exec event for a task stopped at the exit of a successful execve: registers,
/// every mapping but [vdso]/[vvar]/[vsyscall] with its file saved through `saver`, the
/// contents of every writable or anonymous mapping (stack, .data, .bss), the saved
/// executable and the new argv. Throws SystemError.
Event capture_exec(pid_t tid, FileSaver& saver);

}  // namespace rwd
