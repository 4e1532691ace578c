// What the recorder saves right after a successful execve: the new address space, so that
// replay can rebuild it exactly even when the files, the kernel's choice of stack layout or
// the host's dynamic loader differ (DESIGN.md "Recording").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "engine/record/file_saver.h"
#include "engine/trace/event.h"

namespace rwd {

/// Builds the Exec event for a task stopped at the exit of a successful execve: registers,
/// every mapping but [vdso]/[vvar]/[vsyscall] with its file saved through `saver`, the
/// contents of every writable or anonymous mapping (stack, .data, .bss), the saved
/// executable and the new argv. The contents are appended to `data`, the trace's data for
/// the next event (TraceWriter::next_event_data), and the regions marked in_data: they are
/// read from the tracee once, into the chunk. Throws SystemError, with `data` as it was.
Event capture_exec(pid_t tid, FileSaver& saver, std::vector<uint8_t>& data);

}  // namespace rwd
