// What `rewind record` does before and around the recorded program, apart from recording it:
// finding the program, creating the trace directory, the program's environment (with the
// syscall-buffering library, preload/README.md), and rewind's own signal handling while the
// program runs. Internal to engine/record.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>

#include "engine/record/recorder.h"
#include "engine/trace/trace_meta.h"

namespace rwd {

/// A recording about to start.
struct RecordSetup {
  std::string program;      ///< the executable found for argv[0] (find_program)
  std::string dir;          ///< the trace directory, created with its files/ directory
  std::string traces_root;  ///< where NAME-N traces live (latest-trace is set there); "" if none
  /// The trace's meta so far: argv, environment (with the preload library's variables when
  /// buffering), cwd, start time, ticks. exe_file is the session's to fill (FileSaver).
  TraceMeta meta;
  bool syscall_buffer = false;  ///< librewind_preload.so is loaded: install the seccomp filter
  /// What rewind's stdout and stderr are: the program's writes to them are its output, which
  /// replay prints again. nullopt when closed.
  std::optional<struct stat> stdout_st, stderr_st;
  /// The device of /proc: a write into one of its files may be one into /proc/PID/mem
  /// (proc_mem_writes.cpp). nullopt when /proc cannot be read.
  std::optional<dev_t> proc_dev;
};

/// Prepares a recording of `opts.argv`. Says on stderr when librewind_preload.so is missing
/// (the recording then traces every syscall). Throws Error when the program cannot be found,
/// SystemError when the trace directory cannot be created (-o DIR must be new or empty).
RecordSetup prepare_recording(const RecordOptions& opts);

/// While recording: the terminal's SIGINT and SIGQUIT go to the program (same process group)
/// and rewind waits for it to react, like a shell; the first SIGTERM or SIGHUP sent to rewind
/// is passed on to `root`, and a second ends the recording (take_end_request); SIGALRM is the
/// scheduler's tick (take_tick) and kSliceSignal a task's CPU-time slice running out
/// (take_slice_signal). None has SA_RESTART, so that each interrupts waitpid.
void handle_own_signals(pid_t root);

/// True once after each SIGALRM since the last call.
bool take_tick();

/// True once, after the second SIGTERM or SIGHUP: the user wants the recording to end even
/// though the program did not (it ignores the first, or a task of it is held).
bool take_end_request();

/// True once after each kSliceSignal (task_cpu_clock.h) since the last call.
bool take_slice_signal();

/// Arms SIGALRM: first after `first_us` microseconds, then every `interval_us` (0: once);
/// both 0 disarms it (setitimer(2), ITIMER_REAL).
void set_tick_timer(long first_us, long interval_us);

}  // namespace rwd
