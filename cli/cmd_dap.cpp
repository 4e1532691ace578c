// `rewind dap`: a Debug Adapter Protocol server on stdin/stdout (the way editors start a
// debug adapter), or on a TCP port with --listen.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include "adapter/dap/dap_server.h"
#include "adapter/dap/dap_token.h"
#include "cli/commands.h"
#include "engine/trace/trace_dir.h"

namespace rwd::cli {

namespace {

/// The running rewind binary, for Record & Debug (`rewind record` in a child).
std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : "/proc/self/exe";
}

}  // namespace

Runner add_dap(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "dap", "Serve the Debug Adapter Protocol on stdin/stdout (editors start this)");
  auto listen = std::make_shared<std::string>();
  auto token = std::make_shared<std::string>();
  auto token_file = std::make_shared<std::string>();
  auto any_trace = std::make_shared<bool>(false);
  cmd->add_option("--listen", *listen,
                  "Serve on TCP instead, one client at a time: [HOST:]PORT (HOST defaults "
                  "to 127.0.0.1; PORT 0 picks a free port)");
  auto* token_opt = cmd->add_option(
      "--token", *token,
      "With --listen: the secret clients must give as \"token\" in launch or attach "
      "(default: a random one, written to TRACES/dap-PORT.token; visible in ps: prefer "
      "--token-file)");
  cmd->add_option("--token-file", *token_file,
                  "With --listen: read the token from this file (first line; mode 600)")
      ->excludes(token_opt);
  auto log = std::make_shared<std::string>();
  cmd->add_option("--log", *log,
                  "Append every DAP message read and written to this file, one a line (not "
                  "with --listen; the environment's REWIND_DAP_LOG names one too)");
  cmd->add_flag("--allow-any-trace", *any_trace,
                "With --listen: let clients debug traces outside the traces directory");
  cmd->footer(
      "See docs/dap.md for the launch and attach arguments, rewind's own requests, and "
      "the TCP server's security rules.");
  return [listen, token, token_file, any_trace, log] {
    DapSessionOptions opts;
    opts.token = *token;
    opts.rewind_exe = self_exe();
    if (!log->empty() && !listen->empty()) {
      std::fprintf(stderr,
                   "rewind: dap: --log is for an editor's session: a TCP server's log would "
                   "hold its clients' tokens\n");
      return kUsageError;
    }
    if (!listen->empty()) {
      if (!token_file->empty()) opts.token = read_token_file(*token_file);
      if (!*any_trace) opts.trace_root = traces_root();
      std::string host = "127.0.0.1", port = *listen;
      size_t colon = listen->rfind(':');
      if (colon != std::string::npos) {
        host = listen->substr(0, colon);
        port = listen->substr(colon + 1);
      }
      if (host.size() > 1 && host.front() == '[' && host.back() == ']')
        host = host.substr(1, host.size() - 2);
      char* end = nullptr;
      long p = std::strtol(port.c_str(), &end, 10);
      if (port.empty() || *end || p < 0 || p > 65535) {
        std::fprintf(stderr, "rewind: dap: --listen wants [HOST:]PORT, not \"%s\"\n",
                     listen->c_str());
        return kUsageError;
      }
      serve_dap_tcp(host, uint16_t(p), opts);
      return 0;
    }
    if (!token->empty() || !token_file->empty() || *any_trace) {
      std::fprintf(stderr,
                   "rewind: dap: --token, --token-file and --allow-any-trace are for --listen "
                   "(an editor that starts rewind dap is trusted)\n");
      return kUsageError;
    }
    opts.log_file = *log;
    if (const char* env = std::getenv("REWIND_DAP_LOG"); opts.log_file.empty() && env)
      opts.log_file = env;
    // stdout carries the protocol: anything else printed there would corrupt it.
    int out = dup(STDOUT_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    std::string broken = serve_dap_session(STDIN_FILENO, out, opts);
    if (!broken.empty()) {
      std::fprintf(stderr, "rewind: dap: %s\n", broken.c_str());
      return 1;
    }
    return 0;
  };
}

}  // namespace rwd::cli
