#include <cstdio>

#include "cli/commands.h"
#include "engine/errors.h"
#include "engine/record/recorder.h"
#include "engine/record/until_failure.h"
#include "engine/ticks/hw_probe.h"

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
    if (a == "-o" || a == "--output" || a == "--ticks") {
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
  cmd->add_option("-o,--output", opts->output_dir, "Write the trace to this new (or empty) directory");
  cmd->add_flag("-v,--verbose", opts->verbose, "Say where the trace went");
  cmd->add_flag("--chaos", opts->chaos,
                "Chaos mode: random time slices and scheduling order between threads, so that "
                "rare interleavings show up more often");
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
  return [cmd, opts, ticks, until] {
    opts->argv = g_program;
    if (!g_split || opts->argv.empty()) {
      std::fprintf(stderr,
                   "rewind: record: no program given (usage: rewind record PROGRAM [ARGS...])\n");
      return kUsageError;
    }
    if (*ticks == "hw") {
      std::string why;
      if (!hardware_ticks_available(&why))
        std::fprintf(stderr,
                     "rewind: record: hardware performance counters are not available here "
                     "(%s); use --ticks=none or --ticks=auto\n",
                     why.c_str());
      else
        std::fprintf(stderr,
                     "rewind: record: recording with hardware ticks is not implemented yet; "
                     "use --ticks=none or --ticks=auto\n");
      return kUsageError;
    }
    if (find_program(opts->argv[0]).empty()) {
      std::fprintf(stderr, "rewind: record: cannot find program '%s'\n", opts->argv[0].c_str());
      return kUsageError;
    }
    if (cmd->count("--until-failure")) {
      int n = *until > 0 ? *until : 100;
      UntilFailureResult u = record_until_failure(*opts, n);
      if (u.failed)
        std::fprintf(stderr, "rewind: run %d of at most %d failed (exit status %d); trace: %s\n",
                     u.runs, n, u.last.exit_code, u.last.trace_dir.c_str());
      else
        std::fprintf(stderr, "rewind: no failure in %d runs; kept the last trace: %s\n", n,
                     u.last.trace_dir.c_str());
      return u.last.exit_code;
    }
    RecordResult r = record(*opts);
    if (opts->verbose)
      std::fprintf(stderr, "rewind: recorded %llu events (%llu preemptions) to %s\n",
                   (unsigned long long)r.events, (unsigned long long)r.preemptions,
                   r.trace_dir.c_str());
    return r.exit_code;
  };
}

}  // namespace rwd::cli
