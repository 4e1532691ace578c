// The secret a `rewind dap --listen` client must present (docs/dap.md, "Security"): given
// with --token or --token-file, or made at random and written to a file only the server's
// user can read.
#pragma once

#include <cstdint>
#include <string>

namespace rwd {

/// A fresh token: 32 hexadecimal digits from getrandom(2) (128 bits). Throws SystemError.
std::string random_token();

/// The token held in `path`: its first line, surrounding blanks removed. Throws Error when
/// the file cannot be read, is empty, is not a regular file, or can be read or written by
/// other users (mode & 077: a secret others can read protects nothing; ssh refuses such key
/// files the same way).
std::string read_token_file(const std::string& path);

/// Writes `token` to `dir`/dap-`port`.token with mode 0600 (an older file of that name is
/// replaced, never followed if it is a link) and returns the file's path. Throws Error.
std::string write_token_file(const std::string& dir, uint16_t port, const std::string& token);

}  // namespace rwd
