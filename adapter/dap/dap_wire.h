// The Debug Adapter Protocol's base protocol (DAP specification, "Base Protocol"): each
// message is a header "Content-Length: N\r\n\r\n" followed by N bytes of JSON.
#pragma once

#include <optional>
#include <string>

namespace rwd {

/// Reads framed messages from a file descriptor (a pipe, stdin or a socket).
class DapReader {
 public:
  /// Reads `fd`. When `wake_fd` is given, input ends as soon as it becomes readable (another
  /// thread's way to stop a reader blocked on a quiet client).
  explicit DapReader(int fd, int wake_fd = -1) : fd_(fd), wake_fd_(wake_fd) {}
  /// The next message's body; nullopt at end of input. Throws Error on a malformed header
  /// (after which the stream cannot be resynchronized).
  std::optional<std::string> next();

 private:
  bool fill();
  int fd_, wake_fd_;
  std::string buf_;
};

/// `bytes` with every byte that is not part of a well-formed UTF-8 sequence replaced by
/// U+FFFD (DAP messages are UTF-8 JSON; a program's output may be anything).
std::string valid_utf8(const std::string& bytes);

/// Writes one message with its header. Throws SystemError when the peer is gone.
void write_dap_message(int fd, const std::string& body);

}  // namespace rwd
