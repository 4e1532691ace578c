#include "adapter/dap/dap_wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "engine/errors.h"

namespace rwd {

void DapReader::set_deadline(std::chrono::steady_clock::time_point deadline,
                             std::function<bool()> applies, std::string why) {
  deadline_ = deadline;
  deadline_applies_ = std::move(applies);
  deadline_why_ = std::move(why);
}

int DapReader::poll_timeout() {
  if (!deadline_) return -1;
  if (!deadline_applies_()) {
    deadline_.reset();
    return -1;
  }
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  *deadline_ - std::chrono::steady_clock::now())
                  .count();
  if (left <= 0) throw Error(deadline_why_);
  return int(std::min<long long>(left, 200));
}

bool DapReader::fill() {
  char chunk[65536];
  for (;;) {
    int timeout = poll_timeout();
    if (wake_fd_ >= 0 || timeout >= 0) {
      pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
      int n = poll(fds, wake_fd_ >= 0 ? 2 : 1, timeout);
      if (n < 0) {
        if (errno == EINTR) continue;
        throw_errno("poll DAP input");
      }
      if (n == 0) continue;  // quiet peer: check the deadline again
      if (wake_fd_ >= 0 && fds[1].revents) return false;
    }
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("read DAP input");
    if (n == 0) return false;
    buf_.append(chunk, size_t(n));
    return true;
  }
}

std::optional<std::string> DapReader::next() {
  size_t end;
  while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
    if (buf_.size() > 8192) throw Error("DAP input: header longer than 8 KiB (not DAP?)");
    if (!fill()) {
      if (buf_.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
      throw Error("DAP input: end of input inside a message header");
    }
  }
  long length = -1;
  size_t pos = 0;
  while (pos < end) {
    size_t eol = buf_.find("\r\n", pos);
    if (eol == std::string::npos || eol > end) eol = end;
    std::string line = buf_.substr(pos, eol - pos);
    static const std::string key = "Content-Length:";
    if (line.compare(0, key.size(), key) == 0) {
      char* stop = nullptr;
      length = std::strtol(line.c_str() + key.size(), &stop, 10);
      if (length < 0 || stop == line.c_str() + key.size())
        throw Error("DAP input: bad Content-Length header \"" + line + "\"");
      if (size_t(length) > kMaxBody)
        throw Error("DAP input: a message of " + std::to_string(length) +
                    " bytes (more than 16 MiB: not DAP?)");
    }
    pos = eol + 2;
  }
  if (length < 0) throw Error("DAP input: message without a Content-Length header");
  size_t start = end + 4;
  while (buf_.size() < start + size_t(length))
    if (!fill()) throw Error("DAP input: end of input inside a message body");
  std::string body = buf_.substr(start, size_t(length));
  buf_.erase(0, start + size_t(length));
  return body;
}

std::string valid_utf8(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    auto c = static_cast<unsigned char>(bytes[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xe  ? 3
                 : (c >> 3) == 0x1e ? 4
                                    : 0;
    bool ok = len > 0 && i + len <= bytes.size();
    for (size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(bytes[i + k]) & 0xc0) == 0x80;
    if (ok && len == 2) ok = c >= 0xc2;  // no overlong encodings
    if (ok) {
      out.append(bytes, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

void write_dap_message(int fd, const std::string& body) {
  std::string msg = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  size_t off = 0;
  while (off < msg.size()) {
    ssize_t n = ::send(fd, msg.data() + off, msg.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::write(fd, msg.data() + off, msg.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("write DAP output");
    off += size_t(n);
  }
}

}  // namespace rwd
