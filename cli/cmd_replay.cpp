#include <signal.h>
#include <unistd.h>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "adapter/gdb/gdb_server.h"
#include "cli/commands.h"
#include "engine/errors.h"
#include "engine/replay/remote_syscall.h"
#include "engine/replay/replay_task.h"
#include "engine/replay/replayer.h"
#include "engine/timeline/timeline.h"
#include "engine/trace/trace_dir.h"
#include "engine/trace/trace_reader.h"

namespace rwd::cli {

namespace {

int replay_autopilot(const std::string& trace, bool verbose) {
  ReplayOptions o;
  o.trace_dir = resolve_trace(trace);
  ReplayResult r = replay_to_end(o);
  if (verbose)
    std::fprintf(stderr,
                 "rewind: replayed %llu events; %llu points between events found with %llu "
                 "stops (%llu with a register-compare trampoline, %llu with an int3, %llu with "
                 "a hardware breakpoint; %llu full memory digests)\n",
                 (unsigned long long)r.events, (unsigned long long)r.points,
                 (unsigned long long)r.point_stops, (unsigned long long)r.points_jump,
                 (unsigned long long)r.points_int3, (unsigned long long)r.points_breakpoint,
                 (unsigned long long)r.point_full_digests);
  if (verbose)
    std::fprintf(
        stderr,
        "rewind: %llu ptrace stops; %llu syscalls made for real in replayed tasks, "
        "%llu of them with one stop (a syscall followed by an int3)\n",
        (unsigned long long)replay_stops_total(),
        (unsigned long long)(RemoteSyscall::calls_by_trap() + RemoteSyscall::calls_by_stops()),
        (unsigned long long)RemoteSyscall::calls_by_trap());
  if (r.interrupted) {
    std::fflush(stdout);
    std::fprintf(stderr, "rewind: trace ends at event %llu (recording was interrupted)\n",
                 (unsigned long long)r.events);
    return kRewindError;
  }
  return r.exit_code;
}

/// Runs gdb (execvp, in place of this process) on `exe`, connected to 127.0.0.1:`port`.
[[noreturn]] void exec_gdb(const std::string& exe, unsigned short port,
                           const std::vector<std::string>& gdb_args) {
  std::vector<std::string> args = {"gdb", "-q", "-ex", "set sysroot /",
                                   // Each process of the trace is an inferior: keep the
                                   // fork()ed ones, and let a continue run them all.
                                   "-ex", "set detach-on-fork off", "-ex",
                                   "set schedule-multiple on", "-ex",
                                   "target remote 127.0.0.1:" + std::to_string(port)};
  args.insert(args.end(), gdb_args.begin(), gdb_args.end());
  args.push_back(exe);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp("gdb", argv.data());
  std::fprintf(stderr, "rewind: cannot run gdb: %s (install gdb, or serve with -s PORT)\n",
               strerror(errno));
  _exit(kRewindError);
}

/// Serves one gdb connection from `acceptor` over a timeline of `trace_dir`.
void serve_one(const std::string& trace_dir, asio::io_context& io,
               asio::ip::tcp::acceptor& acceptor) {
  Timeline timeline(trace_dir);
  asio::ip::tcp::socket socket(io);
  acceptor.accept(socket);
  acceptor.close();
  gdb::serve(timeline, socket, trace_dir);
}

int replay_with_gdb(const std::string& trace, int port, const std::vector<std::string>& gdb_args) {
  std::string dir = resolve_trace(trace);
  std::string exe;
  {
    TraceReader reader(dir);  // a clear error now, before gdb starts, for a bad trace
    exe = reader.file_path(reader.meta().exe_file);
  }
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(
      io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), (unsigned short)port));
  unsigned short bound = acceptor.local_endpoint().port();
  if (port != 0) {
    std::fprintf(stderr,
                 "rewind: gdb server listening on 127.0.0.1:%u; connect with\n"
                 "  gdb -ex 'set detach-on-fork off' -ex 'set schedule-multiple on' \\\n"
                 "      -ex 'target remote 127.0.0.1:%u' %s\n",
                 bound, bound, exe.c_str());
    serve_one(dir, io, acceptor);
    return 0;
  }
  // gdb takes over this process (its exit status is rewind's, the terminal is its); the
  // server runs in a child, which ignores the terminal's Ctrl-C (gdb handles it).
  std::fflush(nullptr);
  pid_t server = fork();
  if (server < 0) throw_errno("fork");
  if (server == 0) {
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int rc = 0;
    try {
      serve_one(dir, io, acceptor);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rewind: %s\n", e.what());
      rc = kRewindError;
    }
    std::fflush(nullptr);
    _exit(rc);
  }
  acceptor.close();
  exec_gdb(exe, bound, gdb_args);
}

}  // namespace

Runner add_replay(CLI::App& app) {
  auto* cmd = app.add_subcommand("replay", "Replay a trace (default: the latest) under gdb");
  cmd->footer(
      "Without -a, rewind serves the replay over gdb's remote protocol and starts gdb on it:\n"
      "break, watch, continue, step, reverse-continue, reverse-stepi, `monitor when`.\n"
      "Arguments after -- go to gdb (e.g. -- -batch -x script.gdb).\n"
      "With -a the program's recorded output is written again and rewind exits with the "
      "recorded exit status; 1 if the replay fails or the trace is incomplete.");
  auto all = std::make_shared<bool>(false);
  auto trace = std::make_shared<std::string>();
  auto port = std::make_shared<int>(0);
  auto gdb_args = std::make_shared<std::vector<std::string>>();
  cmd->add_flag("-a,--autopilot", *all, "Replay to the end without a debugger");
  cmd->add_option("-s,--dbgport", *port,
                  "Serve gdb's remote protocol on 127.0.0.1:PORT for one client; start no gdb")
      ->check(CLI::Range(1, 65535));
  cmd->add_option("TRACE", *trace, "Trace name or directory");
  cmd->add_option("GDB_ARGS", *gdb_args, "Arguments for gdb, after --");
  auto verbose = std::make_shared<bool>(false);
  cmd->add_flag("-v,--verbose", *verbose,
                "Say how many events were replayed and what finding the points between "
                "events cost");
  return [all, trace, port, gdb_args, verbose] {
    if (*all) return replay_autopilot(*trace, *verbose);
    return replay_with_gdb(*trace, *port, *gdb_args);
  };
}

}  // namespace rwd::cli
