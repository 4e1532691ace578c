// `rewind dap`: a Debug Adapter Protocol server on stdin/stdout (the way editors start a
// debug adapter), or on a TCP port with --listen.
#include <unistd.h>

#include <climits>
#include <cstdio>

#include "adapter/dap/dap_server.h"
#include "cli/commands.h"

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
  cmd->add_option("--listen", *listen,
                  "Serve on TCP instead, one client after another: [HOST:]PORT (HOST defaults "
                  "to 127.0.0.1; PORT 0 picks a free port)");
  cmd->add_option("--token", *token,
                  "A secret clients must give as \"token\" in launch or attach (required for "
                  "a HOST that is not loopback)");
  cmd->footer("See docs/dap.md for the launch and attach arguments and rewind's own requests.");
  return [listen, token] {
    DapSessionOptions opts;
    opts.token = *token;
    opts.rewind_exe = self_exe();
    if (!listen->empty()) {
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
