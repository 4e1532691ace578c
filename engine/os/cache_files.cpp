// rewind's cache directory (cache_files.h).
#include "engine/os/cache_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace rwd {

std::string rewind_cache_dir() {
  if (const char* d = getenv("REWIND_CACHE_DIR"); d && *d) return d;
  if (const char* x = getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/rewind";
  if (const char* h = getenv("HOME"); h && *h == '/') return std::string(h) + "/.cache/rewind";
  return "";
}

bool replace_file(const std::string& path, const std::string& contents) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return false;
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, contents.data(), contents.size()) == ssize_t(contents.size());
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(tmp.c_str(), path.c_str()) == 0) return true;
  ::unlink(tmp.c_str());
  return false;
}

}  // namespace rwd
