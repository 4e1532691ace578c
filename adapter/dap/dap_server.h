// Serving DAP sessions: on stdin/stdout (an editor starts `rewind dap`), or on a TCP port
// (`rewind dap --listen HOST:PORT`), one client after another.
#pragma once

#include <cstdint>
#include <string>

#include "adapter/dap/dap_session.h"

namespace rwd {

/// Serves one session, reading requests from `in_fd` and writing to `out_fd`, until the
/// client disconnects or its input ends. Requests are handled in order on this thread;
/// another thread reads ahead so that pause and cancel act at once. Returns "" after a clean
/// end, else why the session broke (a malformed header: the stream cannot be resynced).
std::string serve_dap_session(int in_fd, int out_fd, const DapSessionOptions& opts);

/// True when `host` is a loopback address (127.0.0.0/8, ::1, "localhost").
bool is_loopback_host(const std::string& host);

/// Listens on `host`:`port` (port 0: any free port) and serves one client at a time, for
/// ever; a client that connects meanwhile gets a "busy" error response at once. Every
/// client must give the token (opts.token; when empty, a random one is written to
/// TRACES_ROOT/dap-PORT.token, mode 0600, and its path printed) within opts.auth_timeout_ms
/// (default 10 s). Says "rewind: DAP server listening on HOST:PORT" on stderr once ready.
/// Throws Error when the address cannot be bound.
void serve_dap_tcp(const std::string& host, uint16_t port, DapSessionOptions opts);

}  // namespace rwd
