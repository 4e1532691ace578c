// The Debug Adapter Protocol's base protocol (DAP specification, "Base Protocol"): each
// message is a header "Content-Length: N\r\n\r\n" followed by N bytes of JSON.
#pragma once

#include <chrono>
#include <functional>
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
  /// From now on, fill() throws Error(`why`) once `deadline` has passed while `applies()`
  /// still returns true (checked before each read and at least every 200 ms while the peer
  /// is quiet). Used for a TCP client that must authenticate in time.
  void set_deadline(std::chrono::steady_clock::time_point deadline, std::function<bool()> applies,
                    std::string why);

  /// The largest message body accepted, in bytes; a larger Content-Length is an Error (the
  /// peer is not an editor: no DAP request comes near it).
  static constexpr size_t kMaxBody = 16u << 20;

 private:
  bool fill();
  /// Poll timeout in milliseconds for the next read (-1: none); throws once the deadline
  /// passed.
  int poll_timeout();
  int fd_, wake_fd_;
  std::string buf_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::function<bool()> deadline_applies_;
  std::string deadline_why_;
};

/// `bytes` with every byte that is not part of a well-formed UTF-8 sequence replaced by
/// U+FFFD (DAP messages are UTF-8 JSON; a program's output may be anything).
std::string valid_utf8(const std::string& bytes);

/// Writes one message with its header. Throws SystemError when the peer is gone (on a socket
/// without raising SIGPIPE: a client that hung up must not kill a TCP server).
void write_dap_message(int fd, const std::string& body);

}  // namespace rwd
