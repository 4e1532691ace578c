// `rewind dap`: a Debug Adapter Protocol server on stdin/stdout, the way editors start a
// debug adapter.
#include <unistd.h>

#include <cstdio>

#include "adapter/dap/dap_session.h"
#include "adapter/dap/dap_wire.h"
#include "cli/commands.h"

namespace rwd::cli {

Runner add_dap(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "dap", "Serve the Debug Adapter Protocol on stdin/stdout (editors start this)");
  (void)cmd;
  return [] {
    // stdout carries the protocol: anything else printed there would corrupt it.
    int out = dup(STDOUT_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    DapSession session([out](const nlohmann::json& msg) { write_dap_message(out, msg.dump()); });
    DapReader in(STDIN_FILENO);
    while (auto body = in.next())
      if (!session.handle(*body)) break;
    return 0;
  };
}

}  // namespace rwd::cli
