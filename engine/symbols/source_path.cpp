#include "engine/symbols/source_path.h"

#include <climits>
#include <cstdlib>
#include <filesystem>

namespace rwd {

std::string normal_source_path(const std::string& path) {
  if (path.empty()) return path;
  std::string out = std::filesystem::path(path).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::string real_source_path(const std::string& path) {
  char buf[PATH_MAX];
  if (!path.empty() && ::realpath(path.c_str(), buf)) return buf;
  return normal_source_path(path);
}

bool path_matches(const std::string& path, const std::string& file) {
  if (path == file) return true;
  if (file.empty() || file.size() >= path.size()) return false;
  return path.compare(path.size() - file.size(), file.size(), file) == 0 &&
         (file[0] == '/' || path[path.size() - file.size() - 1] == '/');
}

}  // namespace rwd
