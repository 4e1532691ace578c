// The Debug Adapter Protocol's base protocol (DAP specification, "Base Protocol"): each
// message is a header "Content-Length: N\r\n\r\n" followed by N bytes of JSON.
#pragma once

#include <optional>
#include <string>

namespace rwd {

/// Reads framed messages from a file descriptor (a pipe, stdin or a socket).
class DapReader {
 public:
  explicit DapReader(int fd) : fd_(fd) {}
  /// The next message's body; nullopt at end of input. Throws Error on a malformed header
  /// (after which the stream cannot be resynchronized).
  std::optional<std::string> next();

 private:
  bool fill();
  int fd_;
  std::string buf_;
};

/// Writes one message with its header. Throws SystemError when the peer is gone.
void write_dap_message(int fd, const std::string& body);

}  // namespace rwd
