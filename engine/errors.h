// Error types that reach the user as one clear line (see DESIGN.md "Errors and bad input").
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace rwd {

/// Base of every error rewind reports to the user. what() is one line, no trailing newline.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A trace that cannot be read: missing, truncated, corrupted or of a newer format version.
/// The message names the file and the byte offset where the problem was found.
class TraceError : public Error {
 public:
  TraceError(const std::string& file, uint64_t offset, const std::string& what)
      : Error(file + ": offset " + std::to_string(offset) + ": " + what) {}
  explicit TraceError(const std::string& what) : Error(what) {}
};

/// Replay reached a state different from the recording (DESIGN.md "divergence").
/// The message names the event number, the task and the first difference.
class DivergenceError : public Error {
 public:
  using Error::Error;
};

/// The recorded program did something rewind does not handle yet (an unknown syscall,
/// an unsupported ioctl, threads before the threads issue). Reported at record time.
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

/// A system call made by rewind itself failed; the message says which and why (strerror).
class SystemError : public Error {
 public:
  SystemError(const std::string& what, int err);
  /// The errno value of the failed call.
  int error() const { return err_; }

 private:
  int err_;
};

/// Throws SystemError(what, errno) — call right after a failing libc call.
[[noreturn]] void throw_errno(const std::string& what);

}  // namespace rwd
