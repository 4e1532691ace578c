#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "adapter/dap/recording_status.h"
#include "cli/commands.h"
#include "engine/errors.h"
#include "engine/record/recorder.h"
#include "engine/record/until_failure.h"
#include "engine/ticks/hw_probe.h"
#include "engine/trace/trace_dir.h"

namespace rwd::cli {

namespace {
std::vector<std::string> g_program;  // set by split_program_command
bool g_split = false;
}  // namespace

int split_program_command(int argc, char** argv) {
  int i = 1;
  while (i < argc && argv[i][0] == '-') ++i;  // options before the subcommand (--version...)
  if (i >= argc || std::string(argv[i]) != "record") return argc;
  for (++i; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      g_program.assign(argv + i + 1, argv + argc);
      g_split = true;
      return i;
    }
    if (a == "-o" || a == "--output" || a == "--ticks" || a == "--status-file") {
      ++i;  // the option's value
      continue;
    }
    if (a.empty() || a[0] != '-') {
      g_program.assign(argv + i, argv + argc);
      g_split = true;
      return i;
    }
  }
  return argc;
}

Runner add_record(CLI::App& app) {
  auto* cmd = app.add_subcommand("record", "Run PROGRAM with ARGS and save a trace of it");
  cmd->footer(
      "Usage: rewind record [OPTIONS] [--] PROGRAM [ARGS...]\n"
      "The trace goes to $REWIND_TRACE_DIR, else $XDG_DATA_HOME/rewind, else "
      "~/.local/share/rewind, as NAME-N; latest-trace points at it.\n"
      "Exit status: the program's (128+signal if it was killed); 2 for a usage error, 1 when "
      "rewind cannot record it.");
  auto opts = std::make_shared<RecordOptions>();
  auto ticks = std::make_shared<std::string>("auto");
  cmd->add_option("-o,--output", opts->output_dir,
                  "Write the trace to this new (or empty) directory");
  cmd->add_flag("-v,--verbose", opts->verbose, "Say where the trace went");
  cmd->add_flag("--chaos", opts->chaos,
                "Chaos mode: random time slices and scheduling order between threads, so that "
                "rare interleavings show up more often");
  cmd->add_flag("--wait", opts->wait_all,
                "Record until every process the program started has ended; without it the "
                "recording ends with the program, and processes it left running (a daemon) "
                "are killed, as rr does");
  if (const char* b = getenv("REWIND_SYSCALL_BUFFER")) opts->syscall_buffer = b[0] != '0';
  cmd->add_flag_callback(
      "--syscall-buffer", [opts] { opts->syscall_buffer = true; },
      "Let librewind_preload.so make common syscalls (file reads and writes, stat, "
      "clock_gettime...) without a ptrace stop, logging them for replay (the default; "
      "REWIND_SYSCALL_BUFFER=0 turns it off)");
  cmd->add_flag_callback(
      "--no-syscall-buffer", [opts] { opts->syscall_buffer = false; },
      "Trace every syscall through ptrace (slower; for comparison, or if buffering fails)");
  auto until = std::make_shared<int>(0);
  cmd->add_option("--until-failure", *until,
                  "Record again and again (--until-failure=N: at most N times, default 100) "
                  "until the program "
                  "exits non-zero or dies from a signal; keep only the failing trace")
      ->expected(0, 1)
      ->default_str("100");
  cmd->add_option("--ticks", *ticks,
                  "Progress counter: none (counter-less: registers and a memory digest), hw "
                  "(hardware branch counters), or auto (hw where it works; today always none)")
      ->check(CLI::IsMember({"auto", "hw", "none"}));
  auto status_file = std::make_shared<std::string>();
  cmd->add_option("--status-file", *status_file,
                  "Keep FILE up to date with the recording's state as JSON (for a debug adapter "
                  "that started the recording in a terminal; docs/dap.md)");
  // What the run made, for the status file: the trace, or the reason there is none.
  auto made_trace = std::make_shared<std::string>();
  auto usage_error = std::make_shared<std::string>();
  auto run = [cmd, opts, ticks, until, made_trace, usage_error] {
    auto refuse = [&](const std::string& why) {
      std::fprintf(stderr, "rewind: record: %s\n", why.c_str());
      *usage_error = why;
      return kUsageError;
    };
    opts->argv = g_program;
    if (!g_split || opts->argv.empty())
      return refuse("no program given (usage: rewind record PROGRAM [ARGS...])");
    if (*ticks == "hw") {
      std::string why;
      if (!hardware_ticks_available(&why))
        return refuse("hardware performance counters are not available here (" + why +
                      "); use --ticks=none or --ticks=auto");
      return refuse(
          "recording with hardware ticks is not implemented yet; use --ticks=none or "
          "--ticks=auto");
    }
    if (find_program(opts->argv[0]).empty())
      return refuse("cannot find program '" + opts->argv[0] + "'");
    if (cmd->count("--until-failure")) {
      int n = *until > 0 ? *until : 100;
      UntilFailureResult u = record_until_failure(*opts, n);
      if (u.failed)
        std::fprintf(stderr, "rewind: run %d of at most %d failed (exit status %d); trace: %s\n",
                     u.runs, n, u.last.exit_code, u.last.trace_dir.c_str());
      else
        std::fprintf(stderr, "rewind: no failure in %d runs; kept the last trace: %s\n", n,
                     u.last.trace_dir.c_str());
      *made_trace = u.last.trace_dir;
      return u.last.exit_code;
    }
    RecordResult r = record(*opts);
    if (opts->verbose)
      std::fprintf(
          stderr,
          "rewind: recorded %llu events (%llu preemptions, %llu put off a tick, "
          "%llu moved within a loop (%llu steps), "
          "%llu signals put off (%llu steps past a branch), %llu timer expiries held, "
          "%llu buffered syscalls, "
          "%llu that waited made "
          "traced, %llu ptrace stops, %llu /proc/PID/mem writes that waited for a "
          "preemption, %llu processes that joined turns through a shared mapping; recorder peak "
          "memory %llu KiB) to %s\n",
          (unsigned long long)r.events, (unsigned long long)r.preemptions,
          (unsigned long long)r.put_off_preemptions, (unsigned long long)r.moved_points,
          (unsigned long long)r.point_steps, (unsigned long long)r.put_off_signals,
          (unsigned long long)r.branch_steps, (unsigned long long)r.held_expiries,
          (unsigned long long)r.buffered_syscalls, (unsigned long long)r.aborted_calls,
          (unsigned long long)r.ptrace_stops, (unsigned long long)r.held_writes,
          (unsigned long long)r.joined_turns, (unsigned long long)(r.peak_memory / 1024),
          r.trace_dir.c_str());
    *made_trace = r.trace_dir;
    return r.exit_code;
  };
  return [status_file, opts, run, made_trace, usage_error]() -> int {
    if (status_file->empty()) return run();
    // The adapter that reads the file waits for "finished" or "failed": every way out says one.
    RecordingStatus s;
    s.pid = getpid();
    write_recording_status(*status_file, s);
    int rc = 0;
    try {
      rc = run();
    } catch (const std::exception& e) {
      // An unsupported syscall keeps the trace written so far: it replays up to there.
      bool kept = !opts->output_dir.empty() && ::access(opts->output_dir.c_str(), F_OK) == 0 &&
                  !is_empty_dir(opts->output_dir);
      s.state = kept ? RecordingStatus::Finished : RecordingStatus::Failed;
      s.exit_code = kRewindError;
      s.trace = kept ? opts->output_dir : "";
      s.error = e.what();
      write_recording_status(*status_file, s);
      throw;
    }
    if (made_trace->empty()) {
      s.state = RecordingStatus::Failed;
      s.error = usage_error->empty() ? "rewind record made no trace" : *usage_error;
    } else {
      s.state = RecordingStatus::Finished;
      s.exit_code = rc;
      s.trace = *made_trace;
    }
    write_recording_status(*status_file, s);
    return rc;
  };
}

}  // namespace rwd::cli
