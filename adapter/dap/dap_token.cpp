#include "adapter/dap/dap_token.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "engine/errors.h"

namespace rwd {

std::string random_token() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("getrandom");
    got += size_t(n);
  }
  std::string hex;
  char digits[3];
  for (unsigned char b : bytes) {
    std::snprintf(digits, sizeof digits, "%02x", b);
    hex += digits;
  }
  return hex;
}

std::string read_token_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error("cannot read the token file " + path + ": " + std::strerror(errno));
  struct stat st;
  std::string text;
  bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && (st.st_mode & 077) == 0) {
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) text.assign(buf, size_t(n));
  }
  ::close(fd);
  if (!regular) throw Error("the token file " + path + " is not a regular file");
  if (st.st_mode & 077)
    throw Error("the token file " + path +
                " can be read by other users: make it private (chmod 600 " + path + ")");
  size_t eol = text.find('\n');
  if (eol != std::string::npos) text.resize(eol);
  size_t first = text.find_first_not_of(" \t\r");
  size_t last = text.find_last_not_of(" \t\r");
  if (first == std::string::npos) throw Error("the token file " + path + " holds no token");
  return text.substr(first, last - first + 1);
}

std::string write_token_file(const std::string& dir, uint16_t port, const std::string& token) {
  std::string path = dir + "/dap-" + std::to_string(port) + ".token";
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    throw Error("cannot replace the token file " + path + ": " + std::strerror(errno));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw Error("cannot write the token file " + path + ": " + std::strerror(errno));
  std::string line = token + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == ssize_t(line.size());
  ok = ::close(fd) == 0 && ok;
  if (!ok) throw Error("cannot write the token file " + path);
  return path;
}

}  // namespace rwd
