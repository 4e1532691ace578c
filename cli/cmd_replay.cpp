#include <cstdio>

#include "cli/commands.h"
#include "engine/replay/replayer.h"
#include "engine/trace/trace_dir.h"

namespace rwd::cli {

Runner add_replay(CLI::App& app) {
  auto* cmd = app.add_subcommand("replay", "Replay a trace (default: the latest)");
  cmd->footer(
      "With -a the program's recorded output is written again and rewind exits with the "
      "recorded exit status; 1 if the replay fails or the trace is incomplete.");
  auto all = std::make_shared<bool>(false);
  auto trace = std::make_shared<std::string>();
  cmd->add_flag("-a,--autopilot", *all, "Replay to the end without a debugger");
  cmd->add_option("TRACE", *trace, "Trace name or directory");
  auto verbose = std::make_shared<bool>(false);
  cmd->add_flag("-v,--verbose", *verbose,
                "Say how many events were replayed and what finding the points between "
                "events cost");
  return [all, trace, verbose] {
    if (!*all) {
      std::fprintf(stderr,
                   "rewind: replay: debugging a replay with gdb is not available yet; use "
                   "`rewind replay -a` to replay to the end\n");
      return kUsageError;
    }
    ReplayOptions o;
    o.trace_dir = resolve_trace(*trace);
    ReplayResult r = replay_to_end(o);
    if (*verbose)
      std::fprintf(stderr,
                   "rewind: replayed %llu events; %llu points between events found with %llu "
                   "breakpoint stops\n",
                   (unsigned long long)r.events, (unsigned long long)r.points,
                   (unsigned long long)r.point_stops);
    if (r.interrupted) {
      std::fflush(stdout);
      std::fprintf(stderr, "rewind: trace ends at event %llu (recording was interrupted)\n",
                   (unsigned long long)r.events);
      return kRewindError;
    }
    return r.exit_code;
  };
}

}  // namespace rwd::cli
